// CycleSignal: what asks the scheduling thread for a cycle (R-SRV-2): a change that may let a
// job start or must be re-explained marks the controller dirty; the thread waits for a mark,
// lets a burst gather (cycle_pacing.h) and runs one cycle for all of it.
//
// Representation: `dirty_` (a change since the last turn took it), `changes_` (marks so far:
// the estimator refreshes after changes, estimates.h), `armed_` (the thread has a cycle due
// at a set time and runs it whatever happens meanwhile, so a mark need not wake it), and
// `stopping_`.
// Thread-safety: every method REQUIRES the controller's lock (the `mu` given at construction);
// the waits release it while they wait. Only the scheduling thread (Controller::Start) waits.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <utility>

#include "base/mutex.h"
#include "server/cycle_pacing.h"

namespace sluice::server {

class CycleSignal {
 public:
  explicit CycleSignal(Mutex& mu) : mu_(mu) {}

  // Something changed: the scheduling thread runs a cycle soon.
  void MarkDirty() SLUICE_REQUIRES(mu_) {
    dirty_ = true;
    ++changes_;
    if (!armed_) cv_.notify_all();
  }
  // Whether a change was marked since the last TakeDirty, and clears it.
  bool TakeDirty() SLUICE_REQUIRES(mu_) { return std::exchange(dirty_, false); }
  uint64_t changes() const SLUICE_REQUIRES(mu_) { return changes_; }

  // The scheduling thread's wait for its next turn: until a change is marked or `deadline`
  // (timers), then, after a change, until the paced time `EventCycleAt(now, last_cycle_end,
  // debounce, gap)` with further marks not waking it. False once Stop was called.
  bool WaitForTurn(MutexLock& lock, SteadyTime deadline, SteadyTime last_cycle_end,
                   std::chrono::milliseconds debounce, std::chrono::milliseconds gap);
  // Waits, without the lock, until Stop: a hung scheduling thread (server/test_faults.h).
  void WaitUntilStopped(MutexLock& lock) {
    cv_.wait(lock, [this]() SLUICE_NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
  }
  // Wakes the scheduling thread at once (a step-down), and for good with Stop.
  void Wake() { cv_.notify_all(); }
  void Stop() SLUICE_REQUIRES(mu_) {
    stopping_ = true;
    cv_.notify_all();
  }

 private:
  Mutex& mu_;
  std::condition_variable_any cv_;
  bool dirty_ SLUICE_GUARDED_BY(mu_) = true;
  bool armed_ SLUICE_GUARDED_BY(mu_) = false;
  bool stopping_ SLUICE_GUARDED_BY(mu_) = false;
  uint64_t changes_ SLUICE_GUARDED_BY(mu_) = 0;
};

}  // namespace sluice::server
