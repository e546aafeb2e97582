#include "agent/job_exit.h"

#include <sys/wait.h>

#include <cmath>

namespace sluice::agent {

namespace {

double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

}  // namespace

JobExit ExitOfWaitStatus(int64_t job, int status, const rusage& usage) {
  JobExit exit{.job = job};
  if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  exit.cpu_seconds = Seconds(usage.ru_utime) + Seconds(usage.ru_stime);
  exit.max_rss_mb = usage.ru_maxrss / 1024.0;  // ru_maxrss is in KiB
  return exit;
}

ExitCause ReportedCause(const std::optional<ExitCause>& kill, bool exited_with_status) {
  if (!kill) return ExitCause::kExit;
  if (*kill == ExitCause::kFenced && exited_with_status) return ExitCause::kExit;
  return *kill;
}

std::string MemLimitMessage(const CgroupUsage& usage) {
  std::string text = "memory limit ";
  text += usage.memory_limit_mb ? std::to_string(*usage.memory_limit_mb) + " MB" : "(unknown)";
  text += " reached (peak ";
  text += usage.peak_mb ? std::to_string(std::llround(*usage.peak_mb)) + " MB" : "unknown";
  text += ", " + std::to_string(usage.oom_kills) +
          (usage.oom_kills == 1 ? " process" : " processes") + " killed by the OOM killer)";
  return text;
}

}  // namespace sluice::agent
