// Agent: one host's link to the controller (`sluice agent`). Registers, heartbeats under a
// lease, runs the jobs it is told to launch through a JobRunner, kills on request, reports
// exits until acknowledged, fences on epoch and fences itself when cut off.
//
// Threads (all share one mutex over the runner and the protocol state):
//   - the caller's thread (Run): reaps jobs, enforces run limits and kill graces, and checks
//     the lease every few milliseconds, so self-fencing never waits for a blocked request;
//   - the heartbeat thread: the long poll (`wait_ms` = the controller's `heartbeat_ms`);
//     re-registers after a 404;
//   - the report thread: sends a short heartbeat as soon as a job ends or a launch fails, so
//     an exit is not held back by the long poll (the controller answers the outstanding poll).
// A response is applied only if its epoch is not older than the highest seen (epoch fencing).
// Launches are deduplicated: a job that runs, or whose end is not yet acknowledged, is never
// started again; after the acknowledgement only a response to a request sent later may start
// it again (a new dispatch), so a delayed repeat of the old launch cannot run it twice.
// The absence it allows (the controller's agent_absence_ms, at least the lease) counts from the
// moment the last successful request was SENT (never later than the controller saw it), so the
// agent's SIGKILL comes before the controller's absence + grace requeues the jobs elsewhere;
// a controller outage shorter than the absence kills no job (issue 44).
//
// A launch that names no account is refused (a launch failure): the agent never picks an
// identity itself. Its cgroups are removed when the agent stops (the runner's destructor),
// and stale ones of a crashed agent of the same name when it starts (Setup).
// Exactly once (issue 19): with a state directory, launches, exits and acknowledgements go to a
// durable journal (journal.h); a restarted agent keeps the instance id, kills the leftovers of
// jobs it launched before and did not adopt (leftover_sweep.h), and reports the exits the
// controller had not acknowledged; it lists those jobs as still held when it registers, so
// none is requeued.
// Restarts (issue 43, job_shepherd.h): after each successful request the agent writes its
// lease file (the send time + the absence), which bounds how long its jobs outlive it; a
// restarted agent adopts the jobs its previous run's shepherds still run within that lease,
// lists them as running when it registers, and fences them by the inherited deadline until
// the controller answers. Stopping (SIGTERM) leaves batch jobs to the next agent, ends
// interactive jobs and steps (their streams pass through this process) and says
// `restarting` in its last heartbeat; `kill_jobs_on_stop` kills every job instead.
//
// Under systemd (R-OPS-2, docs/systemd.md; AgentOptions::notifier) Run says READY=1 once its
// loops run — not once registered: a host that boots before its controller must not fail its
// start — keeps the watchdog alive from the main loop, refreshes STATUS= (service_status.h)
// every second, and says STOPPING=1 when it stops.
//
// Implements R-SRV-3 (agent side), the agent part of R-SRV-2 (`running` on register), and the
// agent's part of R-SEC-1, R-SEC-3 and R-SEC-4 (through the JobRunner).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "agent/job_runner.h"
#include "agent/protocol.h"

namespace sluice::daemon {
class ServiceNotifier;
}  // namespace sluice::daemon

namespace sluice::agent {

struct AgentOptions {
  core::HostSpec host;  // slots 0: not given (the controller then counts 1)
  std::string server;   // http://127.0.0.1:PORT or https://...
  std::string token;
  std::string munge_socket;  // used when `token` is empty: MUNGE credentials (R-SEC-2)
  std::string ca_file;       // PEM CA bundle verifying an https:// controller
  std::string work_dir;      // cwd of jobs that name none; empty: the agent's cwd
  // Where each job gets a private TMPDIR (job_tmpdir.h); empty: jobs keep the one they carry.
  std::string job_tmpdir;
  // The agent's journal of launched and ended jobs (journal.h); empty: none (exits are then
  // lost with a crash of the agent, and leftovers without cgroups are not swept).
  std::string state_dir;
  // Grace between SIGTERM and SIGKILL when the lease expires; keep it well below the
  // controller's --host-loss-grace-seconds.
  std::chrono::milliseconds fence_grace{1000};
  std::chrono::milliseconds run_limit_grace{5000};
  // How often the main loop checks deadlines; it also wakes when a job ends (SIGCHLD), since
  // a job that ended and is not reaped yet is lost with a crash of the agent (it would run
  // again).
  std::chrono::milliseconds tick{5};
  // Identity and containment of jobs (R-SEC-1, R-SEC-3): an empty `runner.host` is the host
  // name above; `sluice agent` sets the cgroup mode (auto by default).
  JobRunnerOptions runner;
  // The host's GPUs as detected when the agent started (gpu_detect.h), sent with every
  // registration (R-GPU-1); nullopt: not looked for, nothing sent. A controller older than
  // the field refuses it, and the agent then registers without it.
  std::optional<wire::GpuReport> gpus;
  // Stopping (SIGTERM) kills every job, each exit saying so, instead of leaving batch jobs to
  // their shepherds for the next agent (issue 43; `sluice agent --kill-jobs-on-stop`, for a
  // host being decommissioned).
  bool kill_jobs_on_stop = false;
  // Borrowed, outlives Run; null: none (tests, an agent run by hand).
  daemon::ServiceNotifier* notifier = nullptr;
};

class Agent {
 public:
  explicit Agent(AgentOptions options);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Sets up containment (JobRunner::Setup) and logs how jobs are contained: the cgroup
  // directories, or the one warning when jobs are only process groups. Errors as Setup's (an
  // explicit --cgroup v2/v1 that is missing or unusable). With a state directory it then
  // recovers from the journal (leftover_sweep.h): kills what a crashed run left, and keeps the
  // exits it had not reported; errors: the journal's (unsafe or locked state directory).
  // Run calls it if the caller did not.
  Status Setup();

  // Runs until `stop` becomes true, then (issue 43) leaves its batch jobs running under their
  // shepherds for the next agent, ends interactive jobs and steps, tells the controller it is
  // restarting, and returns 0; with kill_jobs_on_stop or without a state directory it kills
  // every job and reports them (best effort) instead. Returns early 1 if the controller
  // refuses the agent's credentials (401), 2 if it does not let this agent serve this host (403:
  // not in the cluster configuration, dropped by a reload, a credential of another host or
  // of a user) or if Setup fails.
  int Run(const std::atomic<bool>& stop);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sluice::agent
