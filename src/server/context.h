// ServerContext: the wiring every part of the controller shares (R-SRV-1, R-SRV-2): the
// controller's lock, the core's ClusterState behind it, the clock, the log and the options,
// and the small parts that signal between threads — the store's write side (StoreWriter),
// the scheduling thread's wake-ups (CycleSignal) and the agents' long polls (AgentWakeups).
//
// The controller's parts (job_book.h, agent_registry.h, cycle_runner.h, cluster_settings.h,
// job_requests.h, ...) each borrow this context; the Controller (controller.h) owns it.
// Invariants:
//  - the core changes only through ApplyLocked (core events) and the cycle runner's Commit
//    (CycleRunner is the one friend that reaches the mutable state);
//  - nothing is written, launched or scheduled while !writes().Writable() (R-HA-1, R-HA-4);
//  - a change that may let a job start or must be re-explained marks cycle() dirty.
// Thread-safety (the single-writer rule, docs/design/architecture.md "Lock order"): the
// controller's state — the core's and every part's — is guarded by one lock, mu(), of rank
// LockRank::kController; every part's method REQUIRES it held unless its header says
// otherwise. Methods that wait (a store commit, a long poll) release it meanwhile and say so.
#pragma once

#include <spdlog/logger.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "base/time.h"
#include "core/cycle/events.h"
#include "core/model/cluster_state.h"
#include "server/agent_wakeups.h"
#include "server/cycle_signal.h"
#include "server/store_writer.h"
#include "store/store.h"

namespace sluice::server {

struct ControllerOptions {
  int64_t lease_ms = 10'000;           // host unavail after this long without a heartbeat
  int64_t host_loss_grace_ms = 5'000;  // on_host_loss after absence + grace
  // How long an agent keeps its jobs running without an answer from any controller (issue 44:
  // a controller restart or failover of 20 s killed every running job; Slurm's SlurmdTimeout
  // is 300 s). Sent to agents at registration; a silent host's jobs are handled by
  // on_host_loss only after absence + grace, when its agent has killed them if it lives (exactly
  // once). The host takes no new work after the lease. Never shorter than the lease (0: the
  // lease, the behaviour before issue 44).
  int64_t agent_absence_ms = 300'000;
  int64_t AbsenceMs() const { return std::max(agent_absence_ms, lease_ms); }
  int32_t max_dispatch_attempts = 3;   // failed launches before EXIT DISPATCH_FAILED
  // A host whose launches fail this many times in a row by its own fault (wire::LaunchFailure::
  // host_fault: its cgroups, fork, a hung launch) is closed with the cause, as Slurm drains a
  // node (issue 47.3); its jobs are requeued without counting the attempt. 0: never.
  int32_t close_host_after_launch_failures = 3;
  int64_t heartbeat_ms = 500;          // the wait_ms agents should use
  int64_t relaunch_ms = 3'000;         // repeat an unconfirmed launch after this long
  int32_t kill_grace_seconds = 10;
  // Explain pending jobs (reasons) at most this often: decisions do not depend on it, and
  // explaining costs time per pending job. 0: every cycle.
  int64_t explain_interval_ms = 0;
  // Cycles that events ask for run at least this long after the previous cycle ended, so
  // that a stream of single submissions shares cycles (cycle_pacing.h); timers are not
  // delayed by it.
  int64_t event_cycle_gap_ms = 10;
  // Ended jobs leave the controller's memory (listings, job detail) this long after they end,
  // as LSF's CLEAN_PERIOD and Slurm's MinJobAge do; their rows stay in the store and
  // dependencies on them keep their verdict. -1: keep them all (`sluice server` accepts -1 or
  // at least 60).
  int64_t keep_ended_seconds = 3600;
  // Ended jobs' rows are deleted from the store this long after they end (R-HA-5; history
  // rows, R-UX-6). -1: never. A store that purges itself (Store::PurgesHistory, SQLite) is
  // purged by HistoryKeeper every history_purge_interval_ms (history_api.h); any other (etcd)
  // by the controller's batches of deletes (Controller::PurgeHistoryLocked). Never both.
  int64_t keep_history_seconds = 30 * 86'400;
  int64_t history_purge_interval_ms = 60'000;
  // Estimated starts (R-UX-8, estimates.h) are refreshed at most this often after a change,
  // and at least every 10 x this; <= 0: not computed.
  int64_t estimate_interval_ms = 3'000;
  // The forecast covers the first this many waiting jobs of each queue (in queue order; the
  // rest show no estimate): its copy of the core is taken under the lock and its cost grows
  // with the jobs in it (issue 45). 0: every waiting job.
  int64_t estimate_jobs_per_queue = 10'000;
  std::string config_path;   // re-read by Reconfigure()
  std::string munge_socket;  // `--munge-socket`: MUNGE on with this socket (request_auth.h)
};

// Who is calling (the HTTP front end resolves bearer tokens, Controller::Authenticate).
struct Caller {
  std::string user;
  bool admin = false;
  bool agent = false;   // the agent token: may call the agent routes only
  // MUNGE as uid 0 (issue 47.8): the agent role on the agent routes, and on the others the
  // user root (an administrator when `root` is in auth.admins), so root's CLI works too.
  bool munge_root = false;
  std::string account;  // the UNIX account its jobs run as (job_identity.h), set at submission
  // An agent credential bound to hosts (auth.agents, agent_credentials.h): the hosts it may
  // serve. Null: any host (the shared agent token, MUNGE as uid 0).
  std::shared_ptr<const std::set<std::string>> agent_hosts;
};

using ClockMs = std::function<int64_t()>;  // wall-clock milliseconds since the epoch

class ServerContext {
 public:
  struct Deps {
    core::ClusterState state;
    store::Store* store = nullptr;  // borrowed; outlives the context
    ControllerOptions options;
    ClockMs clock;
    std::shared_ptr<spdlog::logger> log;
  };
  explicit ServerContext(Deps deps);

  // The controller's lock (the single-writer rule above).
  Mutex& mu() const SLUICE_RETURN_CAPABILITY(mu_) { return mu_; }
  int64_t NowMs() const { return clock_(); }
  Instant Now() const { return clock_() / 1000; }
  const ControllerOptions& options() const { return options_; }
  spdlog::logger& log() const { return *log_; }
  const std::shared_ptr<spdlog::logger>& shared_log() const { return log_; }

  // The core's state, for reading.
  const core::ClusterState& state() const SLUICE_REQUIRES(mu_) {
    SLUICE_DCHECK(mu_.HeldByThisThread());
    return state_;
  }
  // The state for the core's checks that only memoize (CompileRequest, SubmissionCheck): they
  // add compiled requests and feasibility verdicts to its caches and change no job, host or
  // queue.
  core::ClusterState& memoizing_state() SLUICE_REQUIRES(mu_) {
    SLUICE_DCHECK(mu_.HeldByThisThread());
    return state_;
  }
  // Applies a core event at Now(); a refusal is returned, and logged as "<what>: <message>"
  // unless `what` is empty (a refusal the caller expects, e.g. a cancel of an ended job).
  Status ApplyLocked(const core::Event& event, const std::string& what) SLUICE_REQUIRES(mu_);

  StoreWriter& writes() { return writes_; }
  const StoreWriter& writes() const { return writes_; }
  CycleSignal& cycle() { return cycle_; }
  AgentWakeups& wakeups() { return wakeups_; }

  // Stops the controller's waits: the scheduling thread, long polls, reads awaiting writes.
  void Stop() SLUICE_REQUIRES(mu_);
  bool stopping() const SLUICE_REQUIRES(mu_) { return stopping_; }

 private:
  friend class CycleRunner;  // the cycle's Commit changes the core (core/driver/drive_loop.h)
  core::ClusterState& mutable_state() SLUICE_REQUIRES(mu_) { return state_; }

  mutable Mutex mu_{LockRank::kController};
  const ClockMs clock_;
  const ControllerOptions options_;
  const std::shared_ptr<spdlog::logger> log_;
  core::ClusterState state_ SLUICE_GUARDED_BY(mu_);
  StoreWriter writes_;
  CycleSignal cycle_;
  AgentWakeups wakeups_;
  bool stopping_ SLUICE_GUARDED_BY(mu_) = false;
};

}  // namespace sluice::server
