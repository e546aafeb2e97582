// The order in which predictive_backfill tries its backfill candidates (issue 20): the jobs
// after a blocked head, each with its predicted runtime (runtime_prediction.h).
//
// Aged candidates (waited at least PredictiveKnobs::age_after) come first, in queue order;
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
  bool aged = false;       // waited at least age_after: tried first, in queue order
};

// Sorts `candidates` into `order` at time `now`, aged candidates first.
void SortCandidates(std::vector<BackfillCandidate>& candidates, BackfillOrder order, Instant now);

}  // namespace sluice::core
