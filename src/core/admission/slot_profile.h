// SlotProfile: free slots over future time on interchangeable slots, for predictive_backfill's
// joint reservations of the first jobs of the queue (`reserve_top`, issue 20;
// head_protection.h), as conservative backfilling keeps it (Mu'alem and Feitelson, 2001).
//
// Representation: a step function of time, steps_ ascending by time, the first at `now`:
//   free(t) = steps_[i].free  for steps_[i].time <= t < steps_[i + 1].time,
// the last step lasting forever. Built from the slots free now and the releases of the
// running jobs at their expected ends (ends before `now` release at `now`; kInfinite never
// releases). Reserve/Unreserve subtract/add slots on a half-open interval [start, end),
// `end` may be kInfinite (a job without a run limit holds its slots forever).
// Invariant: steps_ is never empty and its times are strictly ascending. free(t) may go
// negative only if a caller reserves what does not fit (Reserve does not check).
// Pure value type; no thread-safety of its own.
#pragma once

#include <cstdint>
#include <vector>

#include "base/time.h"
#include "core/admission/reservation.h"

namespace sluice::core {

class SlotProfile {
 public:
  // `releases` in any order; each frees `slots` at max(expected_end, now).
  SlotProfile(Instant now, int64_t free_now, const std::vector<Release>& releases);

  // The earliest t >= now such that free >= slots on [t, t + duration); kInfinite if none.
  // duration == kInfinite asks free >= slots forever from t.
  Instant EarliestFit(int64_t slots, Duration duration) const;
  // Whether free >= slots on [start, end). REQUIRES: start >= now, start <= end.
  bool Fits(Instant start, Instant end, int64_t slots) const;
  // free -= slots on [start, end). REQUIRES: start >= now, start <= end.
  void Reserve(Instant start, Instant end, int64_t slots) { Add(start, end, -slots); }
  // free += slots on [start, end): undoes Reserve.
  void Unreserve(Instant start, Instant end, int64_t slots) { Add(start, end, slots); }

  // free(t) for t >= now (tests and explanations).
  int64_t FreeAt(Instant t) const;

 private:
  struct Step {
    Instant time = 0;
    int64_t free = 0;
  };
  // Index of the step holding `t` (t >= now).
  size_t StepAt(Instant t) const;
  // Makes `t` a step boundary (t > now, t != kInfinite) and returns its index.
  size_t SplitAt(Instant t);
  void Add(Instant start, Instant end, int64_t delta);

  std::vector<Step> steps_;
};

}  // namespace sluice::core
