#include "server/cycle_signal.h"

namespace sluice::server {

bool CycleSignal::WaitForTurn(MutexLock& lock, SteadyTime deadline, SteadyTime last_cycle_end,
                              std::chrono::milliseconds debounce, std::chrono::milliseconds gap) {
  cv_.wait_until(lock, deadline,
                 [this]() SLUICE_NO_THREAD_SAFETY_ANALYSIS { return stopping_ || dirty_; });
  if (stopping_) return false;
  if (dirty_) {
    // Let a burst of events arrive, and space event cycles (cycle_pacing.h): armed, the
    // thread is not woken by each further event, only by Stop.
    const SteadyTime at = EventCycleAt(std::chrono::steady_clock::now(), last_cycle_end,
                                       debounce, gap);
    armed_ = true;
    cv_.wait_until(lock, at, [this]() SLUICE_NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
    armed_ = false;
  }
  return !stopping_;
}

}  // namespace sluice::server
