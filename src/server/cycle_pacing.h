// When the scheduling thread runs the cycle that events asked for (ServerContext::MarkDirty):
// a burst is let gather for `debounce` after the event that woke the thread, and cycles run
// for events at least `gap` after the thread's previous turn (cycle or timer check) ended.
// A stream of events, such as a shell loop of single submissions (one request and one commit
// each, ~2 ms apart), then shares one cycle per `gap` instead of waking the scheduler and
// taking the lock once per event; a lone event still gets its cycle after `debounce`
// (issue 21). Timers (the core's wake_at, the explain interval) are not paced here.
#pragma once

#include <algorithm>
#include <chrono>

namespace sluice::server {

using SteadyTime = std::chrono::steady_clock::time_point;

inline SteadyTime EventCycleAt(SteadyTime woken, SteadyTime last_cycle_end,
                               std::chrono::milliseconds debounce, std::chrono::milliseconds gap) {
  return std::max(woken + debounce, last_cycle_end + gap);
}

}  // namespace sluice::server
