#include "cli/log_flags.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "daemon/journal_stream.h"

namespace sluice::cli {
namespace {

// The pattern flag `%*`: the line's journald priority prefix.
class JournalPriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*time*/,
              spdlog::memory_buf_t& dest) override {
    const std::string_view prefix = JournalPrefix(msg.level);
    dest.append(prefix.data(), prefix.data() + prefix.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JournalPriorityFlag>();
  }
};

}  // namespace

std::string_view JournalPrefix(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return "<7>";
    case spdlog::level::info:
      return "<6>";
    case spdlog::level::warn:
      return "<4>";
    case spdlog::level::err:
      return "<3>";
    case spdlog::level::critical:
      return "<2>";
    case spdlog::level::off:
    case spdlog::level::n_levels:
      break;
  }
  return "<6>";
}

void AddLogFlags(CLI::App* cmd, LogFlags& flags) {
  cmd->add_option("--log-level", flags.level, "trace, debug, info, warn, error (default info)");
  cmd->add_option("--log-file", flags.file, "append the log here instead of standard error");
}

Status SetUpLogging(const LogFlags& flags, const std::string& name) {
  const spdlog::level::level_enum level = spdlog::level::from_str(flags.level);
  if (level == spdlog::level::off && flags.level != "off") {
    return InvalidArgument("--log-level " + flags.level +
                           ": expected trace, debug, info, warn or error");
  }
  std::shared_ptr<spdlog::logger> logger;
  spdlog::drop(name);  // a second daemon started in one process (tests) replaces the first's
  if (flags.file.empty()) {
    logger = spdlog::stderr_color_mt(name);
  } else {
    try {
      logger = spdlog::basic_logger_mt(name, flags.file);
    } catch (const spdlog::spdlog_ex& e) {
      return InvalidArgument("--log-file " + flags.file + ": " + e.what());
    }
  }
  // journald stamps each line itself, and takes its priority from the `<N>` prefix.
  if (flags.file.empty() && daemon::StderrIsJournal()) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JournalPriorityFlag>('*').set_pattern("%*%l %v");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  logger->set_level(level);
  if (!flags.file.empty()) logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace sluice::cli
