// The order in which predictive_backfill tries its backfill candidates (issue 20): the jobs
// after a blocked head, each with its predicted runtime (runtime_prediction.h).
//
// Aged candidates (IsAged: waited at least PredictiveKnobs::age_after, or at least
// age_limits times their own run limit) come first, in queue order;
// the others follow in the configured order (BackfillOrder, predictive_config.h). Every
// order ends on the queue position, so the result is a total order and deterministic:
//   kQueue:     queue position.
//   kShortest:  predicted runtime ascending (shortest job backfilled first, SJBF), then
//               queue position.
//   kExpansion: expansion factor x = (wait + p) / p descending, p = max(predicted, 1 s),
//               wait = now - submit time; a job without any runtime bound (p = kInfinite)
//               has x = 1. Then queue position.
#pragma once

#include <cstddef>
#include <vector>

#include "base/time.h"
#include "core/model/job.h"
#include "core/model/predictive_config.h"

namespace sluice::core {

struct BackfillCandidate {
  const Job* job = nullptr;
  size_t position = 0;     // in the queue's order this cycle
  Duration predicted = 0;  // RuntimePredictor::Predict
  bool aged = false;       // IsAged: tried first, in queue order
};

// Whether a candidate that has waited `waited` seconds is aged under `knobs`:
//   (age_after > 0 and waited >= age_after) or (age_limits > 0, the job has a run limit L,
//   and waited >= age_limits x L).
bool IsAged(const Job& job, Duration waited, const PredictiveKnobs& knobs);

// Sorts `candidates` into `order` at time `now`, aged candidates first.
// REQUIRES: `candidates` in ascending position (as collected, in queue order).
void SortCandidates(std::vector<BackfillCandidate>& candidates, BackfillOrder order, Instant now);

}  // namespace sluice::core
