#include "agent/protocol.h"

#include <charconv>
#include <cmath>

namespace sluice::agent {

wire::ExitReport ExitReportOf(const JobExit& exit) {
  wire::ExitReport report{.job = exit.job,
                          .run = exit.run,
                          .signal = exit.signal,
                          .cause = exit.cause,
                          .cpu_seconds = exit.cpu_seconds,
                          .max_rss_mb = exit.max_rss_mb,
                          .message = exit.message};
  if (exit.exit_code) {
    report.exit_code = *exit.exit_code;
  } else if (exit.signal) {
    report.exit_code = 128 + *exit.signal;
  }
  return report;
}

wire::StepExit StepExitOf(const JobExit& exit) {
  return wire::StepExit{.status = ExitReportOf(exit).ShellStatus(),
                        .signal = exit.signal,
                        .cpu_seconds = exit.cpu_seconds,
                        .max_rss_mb = exit.max_rss_mb};
}

JobSpec JobSpecOf(const wire::Launch& launch, const std::string& default_cwd) {
  JobSpec spec{.job = launch.job,
               .run = launch.run,
               .command = launch.argv.empty() ? launch.command : std::string(),
               .argv = launch.argv,
               .cwd = launch.cwd.empty() ? default_cwd : launch.cwd,
               .output = launch.output,
               .error = launch.error,
               .run_limit = launch.run_limit,
               .env = launch.env,
               .account = launch.account,
               .mem_limit_mb = launch.mem_limit_mb,
               .cpu_limit = launch.cpu_limit,
               .umask = launch.umask,
               .output_default = launch.output_default,
               .gpus = launch.gpus};
  return spec;
}

Result<std::map<std::string, std::string>> ParseAttributeList(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("`" + item + "`: expected NAME=VALUE");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
    start = comma + 1;
  }
  return out;
}

Result<std::map<std::string, int64_t>> ParseResourceList(const std::string& text) {
  Result<std::map<std::string, std::string>> items = ParseAttributeList(text);
  if (!items) return items.error();
  std::map<std::string, int64_t> out;
  for (const auto& [key, value] : *items) {
    double number = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size() || number < 0 ||
        !(number < 9e18)) {
      return InvalidArgument("`" + key + "=" + value + "`: expected a non-negative number");
    }
    out[key] = static_cast<int64_t>(number);
  }
  return out;
}

}  // namespace sluice::agent
