// StepSessions: the steps this agent runs for jobs (R-LAUNCH-1..3), each a process started by
// the JobRunner (as the job's account, in the job's containment) whose streams go through the
// controller: an output thread reads its stdout and stderr (or its terminal) and POSTs frames
// to /v1/agents/HOST/steps/JOB/STEP/output, ending with its exit; an input thread long-polls
// .../input and writes stdin, closes it at EOF, delivers signals to the step's process group
// and sizes its terminal (wire/step_stream.h).
//
// A step dies with its job: where the job runs here its steps are in its cgroup; elsewhere
// they are in a cgroup of their own that a kill order for the job (step 0) removes with all
// it holds; a kill order for one step SIGKILLs its process group; without cgroups the leader
// has the parent-death signal, and the controller's kill orders reach every process group.
// A step that cannot start ends at once with an exit frame carrying the error (status 255).
// An interactive job's main process is step 0 of its job: started by the runner as the job
// itself (Attach), its exit given by the agent when the runner reaps it (JobEnded).
// Thread-safety: Start, Attach, JobEnded, Kill, KillAll and Reap REQUIRE the agent's mutex (they use the
// runner); the sessions' threads never take it, except through `endpoint`.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "agent/job_runner.h"
#include "base/status.h"
#include "wire/step_stream.h"

namespace sluice::agent {

// Where the sessions' requests go: the controller that serves now, and its credentials.
struct StepEndpoint {
  std::string url;
  std::string authorization;  // an Authorization header value
  std::string ca_file;
};
using EndpointFn = std::function<Result<StepEndpoint>()>;
// Starts a session's process with the given streams; its pid.
using StartFn = std::function<Result<pid_t>(const StepStdio&)>;

class StepSession;

class StepSessions {
 public:
  StepSessions(std::string host, EndpointFn endpoint);
  ~StepSessions();  // kills every step and waits for the threads
  StepSessions(const StepSessions&) = delete;
  StepSessions& operator=(const StepSessions&) = delete;

  void Start(const wire::StepOrder& order, JobRunner& runner);
  // Ends the ordered step at once with `why` as its exit's error (status 255): a fenced agent
  // starts nothing, but its client must not wait forever.
  void Refuse(const wire::StepOrder& order, const std::string& why);
  // An interactive job (R-LAUNCH-3): its main process, started by `start` (the runner's Start,
  // which then reaps it), with step 0's streams; JobEnded gives its exit. Returns start's
  // error, if any (the session then reports it as step 0's exit).
  Status Attach(int64_t job, bool pty, int rows, int cols, const StartFn& start);
  void JobEnded(int64_t job, const wire::StepExit& exit);
  void Kill(const wire::StepKill& kill, JobRunner& runner);
  // A user's signal to the job (issue 47): to each of its steps here in its own session,
  // unless the job's cgroup holds them (JobRunner::Signal reached them). Returns whether any
  // step was signalled.
  bool Signal(int64_t job, int signal, const JobRunner& runner);
  void KillAll(JobRunner& runner);
  // Forgets the sessions whose threads have finished; the jobs they were of.
  std::set<int64_t> Reap();
  bool HasJob(int64_t job) const;
  size_t size() const { return sessions_.size(); }

 private:
  void Open(const wire::StepOrder& order, const StartFn& start, bool owns_process);

  std::string host_;
  EndpointFn endpoint_;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<StepSession>> sessions_;
};

}  // namespace sluice::agent
