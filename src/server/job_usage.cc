#include "server/job_usage.h"

#include <cmath>

namespace sluice::server {
namespace {

// To 1 / `scale`: 1.23456 at scale 1000 is 1.235.
std::optional<double> Rounded(const std::optional<double>& value, double scale) {
  if (!value) return std::nullopt;
  return std::round(*value * scale) / scale;
}

}  // namespace

void RecordUsage(JobInfo& job, const wire::ExitReport& report) {
  job.row.cpu_seconds = Rounded(report.cpu_seconds, 1000);
  job.row.max_rss_mb = Rounded(report.max_rss_mb, 10);
  if (!report.message.empty()) job.message = report.message;
}

std::string ExitCauseText(wire::ExitCause cause) {
  switch (cause) {
    case wire::ExitCause::kRunLimit:
      return "RUN_LIMIT";
    case wire::ExitCause::kMemLimit:
      return "MEM_LIMIT";
    case wire::ExitCause::kExit:
    case wire::ExitCause::kKilled:
    case wire::ExitCause::kFenced:
      break;
  }
  return "";
}

}  // namespace sluice::server
