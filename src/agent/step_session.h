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
// Thread-safety: Start, Kill, KillAll and Reap REQUIRE the agent's mutex (they use the
// runner); the sessions' threads never take it, except through `endpoint`.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
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

class StepSession;

class StepSessions {
 public:
  StepSessions(std::string host, EndpointFn endpoint);
  ~StepSessions();  // kills every step and waits for the threads
  StepSessions(const StepSessions&) = delete;
  StepSessions& operator=(const StepSessions&) = delete;

  void Start(const wire::StepOrder& order, JobRunner& runner);
  void Kill(const wire::StepKill& kill, JobRunner& runner);
  void KillAll(JobRunner& runner);
  // Forgets the sessions whose threads have finished.
  void Reap();
  size_t size() const { return sessions_.size(); }

 private:
  std::string host_;
  EndpointFn endpoint_;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<StepSession>> sessions_;
};

}  // namespace sluice::agent
