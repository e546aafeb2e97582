#include "core/admission/runtime_prediction.h"

#include <algorithm>

namespace sluice::core {

Duration RuntimePredictor::Predict(const Job& job) const {
  const Duration limit = job.spec.run_limit.value_or(kInfinite);
  auto mean = history_->MeanOfLast(job.spec.user, runs_);
  return mean ? std::min(*mean, limit) : limit;
}

Instant RuntimePredictor::PredictedEnd(const Job& running, Instant now) const {
  const Instant predicted = AddDuration(running.start_time, Predict(running));
  if (now < predicted) return predicted;
  const Instant limit_end = running.EstimatedEnd();  // start + L, or kInfinite
  return now < limit_end ? limit_end : now;
}

}  // namespace sluice::core
