// Runtime prediction for predictive_backfill (issue 20), after Tsafrir, Etsion and
// Feitelson (TPDS 2007): a job will run about as long as its user's last runs did.
//
// Formulas, for a job j of user u with run limit L (kInfinite when j has none):
//   predicted(j) = min(mean of u's last `runs` runtimes, L)   when u has finished a job,
//                = L                                          otherwise.
// With history_match = user_limit, "u's last runtimes" are those of u's finished jobs whose
// run limit was L when u has any, else all of u's. With the study's true-runtime table
// (`sluice sim --oracle-runtimes`, RuntimeHistory::SetTrueRuntime), predicted(j) =
// min(true runtime of j, L) instead: perfect predictions, to bound what ordering can gain.
// For a running job started at t0, at time `now`, corrected when it outlives the prediction:
//   predicted_end(j) = t0 + predicted(j)   while now < t0 + predicted(j),
//                    = t0 + L              once it has outlived it (the prediction was wrong;
//                                          the run limit is the only bound left),
//                    = now                 once it has outlived L too (as EASY: due now).
// The history is the state's RuntimeHistory at the time of the cycle, so a running job's
// prediction may change as other jobs of its user finish.
// Pure functions of their arguments; no state of their own.
#pragma once

#include <cstdint>

#include "base/time.h"
#include "core/model/cluster_state.h"
#include "core/model/job.h"
#include "core/model/predictive_config.h"
#include "core/model/runtime_history.h"

namespace sluice::core {

class RuntimePredictor {
 public:
  // REQUIRES: `history` outlives the predictor; 1 <= runs <= RuntimeHistory::kKept.
  RuntimePredictor(const RuntimeHistory& history, int32_t runs,
                   HistoryMatch match = HistoryMatch::kUser)
      : history_(&history), runs_(runs), match_(match) {}
  // With the queue's knobs (history_runs, history_match).
  RuntimePredictor(const RuntimeHistory& history, const PredictiveKnobs& knobs)
      : RuntimePredictor(history, knobs.history_runs, knobs.history_match) {}

  // predicted(j) in seconds; kInfinite when the job has neither history nor a run limit.
  Duration Predict(const Job& job) const;
  // predicted_end(j) of a RUNNING job at `now` (the formulas above).
  Instant PredictedEnd(const Job& running, Instant now) const;

 private:
  const RuntimeHistory* history_;
  int32_t runs_;
  HistoryMatch match_;
};

// The end the start-time forecast (core/driver/forecast.h) expects of a job RUNNING at `now`
// (or started at `now` in the forecast). For a job whose queue runs predictive_backfill:
// its corrected predicted end, RuntimePredictor::PredictedEnd with the queue's history_runs
// (so the estimate "uses predictions", issue 20); for any other job: start + run limit, no
// earlier than `now`. A job inside an advance reservation ends at the latest when the window
// it started in ends + the reservation's overrun, as the drivers end it (R-RSV-2), so such a
// job without a run limit ends then too. `end` is kInfinite when nothing bounds it.
struct ForecastEnd {
  Instant end = kInfinite;
  bool predicted = false;  // `end` comes from a prediction
};
ForecastEnd ExpectedEndForForecast(const ClusterState& state, const Job& running, Instant now);

}  // namespace sluice::core
