// How a job's end is reported (JobRunner, StepSession): the exit code or signal and the usage
// of a reaped process, the cause sent with it, and the message of an OOM kill.
// Thread-safety: pure functions.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <optional>
#include <string>

#include "agent/cgroup.h"
#include "wire/exit_cause.h"

namespace sluice::agent {

// The protocol's enum (wire/exit_cause.h), so exits go on the wire as they are. kMemLimit: the
// kernel's OOM killer ended a process of the job's cgroup at its memory limit.
using ExitCause = wire::ExitCause;
using wire::ToString;

struct JobExit {
  int64_t job = 0;
  uint64_t run = 0;              // its JobSpec's
  std::optional<int> exit_code;  // set when the leader exited normally
  std::optional<int> signal;     // set when the leader was killed by a signal
  ExitCause cause = ExitCause::kExit;
  // R-SEC-4: user + system CPU of all its processes and its memory high-water mark, from its
  // cgroup; without one, from the reaped leader's rusage (which covers the descendants it
  // waited for, and the largest single RSS among them).
  double cpu_seconds = 0;
  double max_rss_mb = 0;
  // For kMemLimit: "memory limit 64 MB reached (peak 64 MB, 1 process killed by the OOM
  // killer)". Empty otherwise.
  std::string message;
};

// How a reaped process ended (wait4's status and rusage): its exit code or signal, its CPU
// time and memory peak.
JobExit ExitOfWaitStatus(int64_t job, int status, const rusage& usage);

// The cause reported for an ended job: `kill`'s (the cause of the kill sent to it, if any),
// except a fence's when the job exited with a status rather than by a signal. That job
// finished by itself: either just before the fence's SIGTERM, while its shepherd was still
// writing the record (issue 44: the nemesis saw job 1047 end 36 ms before its agent fenced;
// reported "fenced", it was requeued and ran twice), or in its own TERM handler. Requeued, it
// would run again.
ExitCause ReportedCause(const std::optional<ExitCause>& kill, bool exited_with_status);

// The message of a kMemLimit exit: "memory limit 64 MB reached (peak 64 MB, 1 process killed
// by the OOM killer)".
std::string MemLimitMessage(const CgroupUsage& usage);

}  // namespace sluice::agent
