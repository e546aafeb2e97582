// StoreWriter: the controller's side of its durable store (R-SRV-1, R-SRV-2, R-HA-1, R-HA-4):
// the epoch it writes in, whether it may write at all (fencing), the writes in flight, and the
// fault that stops writes until a resync rewrites the rows.
//
// Representation: the store (borrowed), the epoch taken at TakeOver, counters of writes handed
// to the store and of those ended (committed or failed), `resync_` set by a write the store
// could not take (kUnavailable: an etcd store without quorum; kResourceExhausted: a full
// disk, issue 19) until the controller rewrote the rows (Controller::ResyncLocked),
// `deposed_` (final) once the store deposed this controller, the fault's text, and the
// submissions withdrawn after a failed write (the store may hold them all the same: a
// timed-out etcd txn may commit, so the resync deletes them).
// Invariants:
//  - a write that fails otherwise ends the process (fenced: this controller may no longer act);
//  - nothing is written, launched or scheduled while !Writable();
//  - a write's follow-up (`then`, and the specs it stored) runs only after its commit, with the
//    controller's lock held.
// Thread-safety: the methods marked REQUIRES(mu) are called with the controller's lock held
// (the lock `mu` passed at construction); Fault(), Recovered(), DiskFault(), deposed() and
// Depose() are safe from any thread. The store's commit callbacks run on its committer thread
// and take the controller's lock themselves (lock order: controller, store fault, store queue;
// docs/design/architecture.md).
#pragma once

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/mutex.h"
#include "base/status.h"
#include "store/store.h"

namespace sluice::server {

// A job row written with its spec (issue 45): the spec's hash, so that once the write
// committed the record can tell whether it still holds that same text (JobBook::SpecsStored).
struct SpecWritten {
  JobId id = 0;
  size_t hash = 0;
};

class StoreWriter {
 public:
  struct Deps {
    store::Store* store = nullptr;                // borrowed; outlives the writer
    Mutex* mu = nullptr;                          // the controller's lock
    std::function<int64_t()> clock;               // wall-clock milliseconds
    std::shared_ptr<spdlog::logger> log;
    std::function<void()> after_commit;           // with `mu` held, after every write ended
  };
  explicit StoreWriter(Deps deps)
      : store_(deps.store),
        mu_(*deps.mu),
        clock_(std::move(deps.clock)),
        log_(std::move(deps.log)),
        after_commit_(std::move(deps.after_commit)) {}

  // The store itself: its snapshot (Load), role, retention, history queries and Flush.
  store::Store& store() const { return *store_; }

  // --- Epoch and fencing ---
  // The epoch this controller writes in: the store's once it leads (TakeOver).
  uint64_t epoch() const SLUICE_REQUIRES(mu_) { return epoch_; }
  void BeginEpoch() SLUICE_REQUIRES(mu_) { epoch_ = store_->epoch(); }
  // Whether this controller may write, launch and schedule now: its store leads (an etcd
  // store's lease is known to live), it was not deposed, and no failed write awaits resync.
  bool Writable() const { return !deposed_ && !resync_ && store_->role() == store::Role::kLeader; }
  bool deposed() const { return deposed_; }
  // Marks this controller deposed (final); true the first time.
  bool Depose() { return !deposed_.exchange(true); }

  // --- Writes ---
  // On a store that serves specs (Store::ServesSpecs): `stored` runs with the lock held after
  // each write that committed rows carrying their spec, with those rows. Set before writing.
  void SetSpecsStored(std::function<void(const std::vector<SpecWritten>&)> stored) {
    specs_stored_ = std::move(stored);
  }
  // Queues `batch`; `then` runs after the commit with the controller's lock held, before
  // waiters wake (not when the write failed).
  void Write(store::WriteBatch batch, std::function<void()> then = nullptr) SLUICE_REQUIRES(mu_);
  // Queues `batch` and waits for its commit with `lock` released meanwhile. Returns the
  // commit's Status: only kUnavailable comes back (any other failure ends the process; a
  // full disk comes back as kUnavailable naming it).
  Status WriteAndWait(MutexLock& lock, store::WriteBatch batch);
  // Waits, with `lock` released, until every write queued so far has committed; false when
  // one of them failed (kUnavailable: a resync is due).
  bool WaitCommitted(MutexLock& lock);
  // For reads that must show only what a restart would show (R-SRV-1): waits until every
  // write queued so far has ended, at most `limit`, and returns with `lock` held and no write
  // in flight (unless the limit passed, or Stop). A cycle stages its rows before they commit,
  // so without this a reader could see a decision, or a gate's counter, that a crash undoes.
  void AwaitWrites(MutexLock& lock, std::chrono::milliseconds limit);
  // Ends AwaitWrites' waits (the controller stops).
  void Stop() SLUICE_REQUIRES(mu_);

  // --- Faults and resync ---
  // A failed write awaits the rewrite of every row (Controller::ResyncLocked).
  bool ResyncDue() const { return resync_; }
  // The resync's rows are queued: later failures set it again.
  void ResyncQueued() { resync_ = false; }
  // Why the last write failed while a resync is due ("" when the store takes writes).
  std::string Fault() const;
  // The resync's rows committed: the fault is over (logged with its duration).
  void Recovered();
  // Whether the fault is a full or failing disk (not a lost quorum): the controller then
  // still leads, serves reads and keeps agents' leases (their registrations need no write).
  bool DiskFault() const { return disk_fault_; }
  // Submissions withdrawn after their write failed, deleted from the store by the next
  // resync (ForgetWithdrawn(n) once the first n are deleted).
  void Withdrawn(JobId id) SLUICE_REQUIRES(mu_) { withdrawn_.push_back(id); }
  const std::vector<JobId>& withdrawn() const SLUICE_REQUIRES(mu_) { return withdrawn_; }
  void ForgetWithdrawn(size_t n) SLUICE_REQUIRES(mu_);

 private:
  // Ends the process after a failed write, or marks a resync due (kUnavailable,
  // kResourceExhausted).
  void Failed(const Status& status);
  // The rows of `batch` that carry their spec, when someone is told of them once stored.
  std::vector<SpecWritten> SpecsOf(const store::WriteBatch& batch) const;
  // After a write ended, with mu_ held.
  void Committed(const Status& status, const std::vector<SpecWritten>& specs)
      SLUICE_REQUIRES(mu_);
  int64_t NowMs() const { return clock_(); }

  store::Store* const store_;
  Mutex& mu_;
  const std::function<int64_t()> clock_;
  const std::shared_ptr<spdlog::logger> log_;
  const std::function<void()> after_commit_;
  std::function<void(const std::vector<SpecWritten>&)> specs_stored_;
  uint64_t epoch_ SLUICE_GUARDED_BY(mu_) = 0;
  uint64_t writes_begun_ SLUICE_GUARDED_BY(mu_) = 0;  // writes handed to the store
  uint64_t writes_ended_ SLUICE_GUARDED_BY(mu_) = 0;  // of those, committed or failed
  bool stopping_ SLUICE_GUARDED_BY(mu_) = false;
  std::condition_variable_any writes_cv_;  // AwaitWrites waits here for writes_ended_
  std::vector<JobId> withdrawn_ SLUICE_GUARDED_BY(mu_);
  std::atomic<bool> deposed_ = false;
  std::atomic<bool> resync_ = false;
  std::atomic<bool> disk_fault_ = false;
  mutable Mutex fault_mu_{LockRank::kStoreFault};
  std::string fault_ SLUICE_GUARDED_BY(fault_mu_);
  int64_t fault_since_ms_ SLUICE_GUARDED_BY(fault_mu_) = 0;
};

}  // namespace sluice::server
