// ServerContext: what every part of the controller shares (R-SRV-1, R-SRV-2): the one mutex,
// the core's ClusterState, the store, the clock, the log and the options, plus the few
// helpers every part needs to act on them (time, events, store writes, waking the cycle).
//
// The controller's parts (job_book.h, agent_registry.h, cycle_runner.h, cluster_settings.h,
// job_requests.h) each borrow this context; the Controller (controller.h) owns it.
// Invariants:
//  - the core changes only through Apply (core events) and the cycle runner's Commit;
//  - a store write that fails ends the process (fenced: this controller may no longer act,
//    R-SRV-2), except one that fails kUnavailable (an etcd store without quorum, R-HA-4) or
//    kResourceExhausted (a full or failing disk, an etcd space quota; issue 19): then
//    `resync` is set, the write's follow-up does not run, and nothing is written, launched or
//    scheduled until the rows are written again (controller_ha.cc); StoreFault() names the
//    cause meanwhile, and requests that would write answer 503 with it;
//  - nothing is written, launched or scheduled while !Writable() (R-HA-1, R-HA-4);
//  - `dirty` is set whenever something may let a job start or must be re-explained.
// Thread-safety: every member except `mu` and the condition variables is guarded by `mu`;
// the functions named *Locked and every part's method REQUIRE `mu` held, unless they say
// otherwise. WriteAndWait releases `mu` while the store commits.
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "core/cycle/events.h"
#include "core/model/cluster_state.h"
#include "store/store.h"

namespace sluice::server {

struct ControllerOptions {
  int64_t lease_ms = 10'000;           // host unavail after this long without a heartbeat
  int64_t host_loss_grace_ms = 5'000;  // on_host_loss after lease + grace
  int32_t max_dispatch_attempts = 3;   // failed launches before EXIT DISPATCH_FAILED
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
  std::string config_path;   // re-read by Reconfigure()
  std::string munge_socket;  // `--munge-socket`: MUNGE on with this socket (request_auth.h)
};

// Who is calling (the HTTP front end resolves bearer tokens, Controller::Authenticate).
struct Caller {
  std::string user;
  bool admin = false;
  bool agent = false;   // the agent token: may call the agent routes only
  std::string account;  // the UNIX account its jobs run as (job_identity.h), set at submission
  // An agent credential bound to hosts (auth.agents, agent_credentials.h): the hosts it may
  // serve. Null: any host (the shared agent token, MUNGE as uid 0).
  std::shared_ptr<const std::set<std::string>> agent_hosts;
};

using ClockMs = std::function<int64_t()>;  // wall-clock milliseconds since the epoch

class ServerContext {
 public:
  ServerContext(core::ClusterState state, store::Store* store, ControllerOptions options,
                ClockMs clock, std::shared_ptr<spdlog::logger> log);

  int64_t NowMs() const { return clock_(); }
  Instant Now() const { return clock_() / 1000; }

  // Applies a core event at Now(); a refusal is returned, and logged as "<what>: <message>"
  // unless `what` is empty (a refusal the caller expects, e.g. a cancel of an ended job).
  Status ApplyLocked(const core::Event& event, const std::string& what);
  // Something changed: the scheduling thread runs a cycle soon.
  void MarkDirty();
  // Queues `batch`; `then` runs after the commit with `mu` held, before waiters wake.
  void WriteLocked(store::WriteBatch batch, std::function<void()> then = nullptr);
  // Queues `batch` and waits for its commit with `lock` (on `mu`) released meanwhile. Returns
  // the commit's Status: only kUnavailable comes back (any other failure ends the process; a
  // full disk comes back as kUnavailable naming it).
  Status WriteAndWait(std::unique_lock<std::mutex>& lock, store::WriteBatch batch);
  // Waits, with `lock` released, until every write queued so far has committed; false when
  // one of them failed (kUnavailable: `resync` is set).
  bool WaitCommitted(std::unique_lock<std::mutex>& lock);
  // For reads that must show only what a restart would show (R-SRV-1): waits until every
  // write queued so far has ended, at most `limit`, and returns with `lock` held and no write
  // in flight (unless the limit passed). A cycle stages its rows before they commit, so
  // without this a reader could see a decision, or a gate's counter, that a crash then undoes.
  void AwaitWrites(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds limit);
  // Whether this controller may write, launch and schedule now: its store leads (an etcd
  // store's lease is known to live), it was not deposed, and no failed write awaits resync.
  bool Writable() const;
  // Why the last write failed while `resync` is set ("" when the store takes writes).
  // Thread-safe without `mu`.
  std::string StoreFault() const;
  // The resync's rows committed: the fault is over (logged with its duration).
  void StoreRecovered();
  // Whether the fault is a full or failing disk (not a lost quorum): the controller then
  // still leads, serves reads and keeps agents' leases (their registrations need no write).
  bool DiskFault() const { return disk_fault_; }

  std::mutex mu;
  std::condition_variable work_cv;    // heartbeats wait here for launches/kills
  std::condition_variable cycle_cv;   // the scheduling thread waits here
  std::condition_variable writes_cv;  // AwaitWrites waits here for writes_ended
  uint64_t writes_begun = 0;          // writes handed to the store
  uint64_t writes_ended = 0;          // of those, committed or failed
  core::ClusterState state;
  store::Store* const store;
  const ControllerOptions options;
  const std::shared_ptr<spdlog::logger> log;
  uint64_t epoch = 0;
  int64_t start_ms = 0;
  bool dirty = true;
  // The scheduling thread has a cycle due at a set time (cycle_pacing.h) and will run it
  // whatever happens meanwhile, so MarkDirty need not wake it.
  bool cycle_armed = false;
  uint64_t changes = 0;  // MarkDirty calls so far (the estimator refreshes after changes)
  bool stopping = false;
  // High availability (R-HA): set once the store deposed this controller (final); set by a
  // write that failed kUnavailable until the rows are written again.
  std::atomic<bool> deposed = false;
  std::atomic<bool> resync = false;
  int64_t first_cycle_ms = 0;  // when the first cycle of this epoch ran (0: not yet)
  // Submissions withdrawn after their write failed: the store may hold them all the same (a
  // timed-out etcd txn may commit), so the resync deletes them.
  std::vector<JobId> withdrawn;
  // The resync is retried at most once per this interval while writes keep failing.
  int64_t next_resync_ms = 0;
  // Hosts whose agents may have new work (a launch committed, a kill ordered) since a batched
  // long poll looked: that poll looks at these at each wake-up, at the others only every few
  // hundred ms (agent_batch.cc), instead of at every host it waits for on every wake-up.
  std::set<std::string> work_hosts;

 private:
  // Ends the process after a failed write, or sets `resync` for kUnavailable (Invariants).
  void WriteFailed(const Status& status);

  ClockMs clock_;
  mutable std::mutex fault_mu_;
  std::string fault_;           // guarded by fault_mu_
  int64_t fault_since_ms_ = 0;  // guarded by fault_mu_
  std::atomic<bool> disk_fault_ = false;
};

}  // namespace sluice::server
