// JobRunner: the process side of an agent — spawns each job as a process in its own session
// (so its process group is the job), reaps it with waitpid, kills whole groups (SIGTERM, then
// SIGKILL after a grace) and enforces run limits. It knows nothing of the protocol.
//
// Representation: one Entry per live job, keyed by job id (ordered, so listings are stable).
// A job is spawned with fork + exec; everything the child needs (argv, envp, paths with `%j`
// replaced) is prepared before fork, because the child of a multithreaded process may only
// call async-signal-safe functions. A close-on-exec pipe carries a failed step (chdir, open,
// exec) and its errno from the child to the parent, so Start reports a failed launch
// synchronously with a message instead of a mysterious exit code 127.
// When a job's leader exits, the rest of its group is killed before the leader is reaped
// (waitid with WNOWAIT keeps the pid, hence the group id, from being reused meanwhile), so
// nothing of a finished job keeps running. The leader gets PR_SET_PDEATHSIG(SIGKILL): if the
// agent dies, its jobs do not run on unsupervised.
//
// Time is passed in (`now`), never read, so tests can drive the deadlines.
// Thread-safety: not thread-safe; the agent serializes calls with its own mutex.
// Implements the process part of R-SRV-3 and the job environment of R-SRV-5b.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::agent {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

struct JobSpec {
  int64_t job = 0;
  // Either a shell command (run as `/bin/sh -c command`) or an argv (argv[0] looked up in
  // PATH). Exactly one is set.
  std::string command;
  std::vector<std::string> argv;
  std::string cwd;     // empty: the agent's working directory
  std::string output;  // stdout file, `%j` replaced by the job id; empty: /dev/null
  std::string error;   // stderr file; empty: the same file as stdout
  std::optional<std::chrono::milliseconds> run_limit;
  std::map<std::string, std::string> env;  // added to (and overriding) the agent's environment
};

enum class ExitCause { kExit, kRunLimit, kKilled };
std::string_view ToString(ExitCause cause);

struct JobExit {
  int64_t job = 0;
  std::optional<int> exit_code;  // set when the leader exited normally
  std::optional<int> signal;     // set when the leader was killed by a signal
  ExitCause cause = ExitCause::kExit;
};

// Replaces every `%j` in `pattern` with the job id (`%%` stays `%%`).
std::string ExpandJobPattern(std::string_view pattern, int64_t job);

class JobRunner {
 public:
  JobRunner() = default;
  ~JobRunner();  // kills (SIGKILL) and reaps whatever still runs
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Starts the job. Returns kAlreadyExists if it runs already; kFailedPrecondition with
  // "<step>: <path>: <errno text>" if chdir, opening an output file or exec failed (the job did
  // not run: a failed launch); kInternal if fork failed.
  Status Start(const JobSpec& spec, TimePoint now);

  // Sends SIGTERM to the job's group and SIGKILL after `grace` (checked by Poll). The exit is
  // reported with cause kKilled. No-op (false) for a job that does not run.
  bool Kill(int64_t job, std::chrono::milliseconds grace, TimePoint now);
  void KillAll(std::chrono::milliseconds grace, TimePoint now);

  // Reaps exited jobs (never blocks), escalates overdue kills to SIGKILL and starts the kill of
  // jobs past their run limit (`run_limit_grace` between SIGTERM and SIGKILL).
  // Returns the jobs that ended since the last call, in job id order.
  std::vector<JobExit> Poll(TimePoint now, std::chrono::milliseconds run_limit_grace);

  std::vector<int64_t> Running() const;
  bool IsRunning(int64_t job) const { return entries_.contains(job); }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    pid_t pid = -1;  // leader; its pid is the group id
    std::optional<TimePoint> limit_at;
    std::optional<TimePoint> sigkill_at;  // set once SIGTERM was sent
    std::optional<ExitCause> kill_cause;
  };
  void Terminate(Entry& entry, ExitCause cause, std::chrono::milliseconds grace, TimePoint now);

  std::map<int64_t, Entry> entries_;
};

}  // namespace sluice::agent
