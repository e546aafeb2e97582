// Mutex: std::mutex with a rank, so that the process's lock order is written once (LockRank)
// and checked at every acquisition, in every build (issue 38). A thread may acquire a mutex
// only while every mutex it holds has a lower rank: an acquisition out of order, or of a
// mutex the thread already holds, is a bug (SLUICE_CHECK-style abort naming both locks),
// found by the first test that takes that path rather than by a deadlock under load.
//
// Representation: each thread keeps the mutexes it holds in a small thread-local stack
// (mutex.cc); lock() checks it against the new rank, unlock() removes the entry. A waiting
// condition variable (std::condition_variable_any) unlocks and relocks through the same
// calls, so the stack stays exact. Cost: a thread-local read and a compare per held lock.
// The ranks and why they are in this order: docs/design/architecture.md, "Lock order".
// Thread-safety: Mutex is a mutex; the checks touch only the calling thread's stack.
#pragma once

#include <mutex>

#include "base/thread_annotations.h"

namespace sluice {

// Every mutex of the controller process, outermost first: a mutex may be taken while holding
// only mutexes listed before it. Leaves (nothing is taken while they are held) come last.
enum class LockRank : int {
  kStatsSampler,        // server/stats_sampler.h: sampling calls into the controller
  kHistoryKeeper,       // server/history_api.h: the retention thread's schedule
  kEstimator,           // server/estimates.h: the estimator thread's stop flag
  kController,          // server/context.h: the controller's state (the single-writer lock)
  kStoreFault,          // server/store_writer.h: why the store refuses writes
  kStoreQueue,          // store/: the writer's queue of batches (SQLite, etcd)
  kStoreSpecs,          // store/etcd_store.h: job specs already in etcd
  kSpecReader,          // store/sqlite_spec_reader.h: the specs' read connection
  kHistoryReader,       // store/sqlite_history.h: the history connection
  kAuth,                // server/request_auth.h: tokens and the MUNGE replay cache
  kIdentityCache,       // server/job_identity.cc: UNIX accounts looked up
  kStepStreams,         // server/step_broker.h: steps' buffered streams and orders
  kEventQueue,          // server/sse_queue.h: one event-stream reader's frames
  kConnectionRegistry,  // server/connection_guard.cc: the guards by port
  kConnections,         // server/connection_guard.h: open connections
  kWorkerQueue,         // server/connection_guard.cc: the HTTP workers' task queue
  kAgentsHeard,         // server/ha_front.h: the agents a standby heard from
  kPipeline,            // server/ordered_pipeline.h: chunks in flight (a restart's job rows)
  // libsluice-drmaa's, in the processes that load it (python3-drmaa, Galaxy, Snakemake),
  // never with the controller's: a job template's values (drmaa/job_template.h), copied out
  // before the session is touched, and the process's DRMAA session (drmaa/session.h), held
  // only to read or change its state, never across a REST call. Neither is held with the other.
  kDrmaaTemplate,
  kDrmaaSession,
};

const char* ToString(LockRank rank);

class SLUICE_CAPABILITY("mutex") Mutex {
 public:
  explicit Mutex(LockRank rank) : rank_(rank) {}
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Aborts when the calling thread holds a mutex of this rank or a later one.
  void lock() SLUICE_ACQUIRE();
  void unlock() SLUICE_RELEASE();
  bool try_lock() SLUICE_TRY_ACQUIRE(true);

  // Whether the calling thread holds this mutex (for SLUICE_DCHECK in REQUIRES functions).
  bool HeldByThisThread() const;
  LockRank rank() const { return rank_; }

 private:
  std::mutex mu_;
  const LockRank rank_;
};

// A scoped lock that may be released and taken again (condition variables, waits for a
// store commit), as std::unique_lock; wait on it with std::condition_variable_any.
using MutexLock = std::unique_lock<Mutex>;

}  // namespace sluice
