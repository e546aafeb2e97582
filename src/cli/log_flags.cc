#include "cli/log_flags.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace sluice::cli {

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
  // journald stamps each line itself.
  const bool journal = flags.file.empty() && std::getenv("JOURNAL_STREAM") != nullptr;
  logger->set_pattern(journal ? "%^%l%$ %v" : "%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  logger->set_level(level);
  if (!flags.file.empty()) logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace sluice::cli
