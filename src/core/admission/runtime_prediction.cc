#include "core/admission/runtime_prediction.h"

#include <algorithm>

namespace sluice::core {

Duration RuntimePredictor::Predict(const Job& job) const {
  const Duration limit = job.spec.run_limit.value_or(kInfinite);
  if (auto truth = history_->TrueRuntime(job.spec.id)) return std::min(*truth, limit);
  std::optional<Duration> mean;
  if (match_ == HistoryMatch::kUserLimit && job.spec.run_limit) {
    mean = history_->MeanOfLastWithLimit(job.spec.user, *job.spec.run_limit, runs_);
  }
  if (!mean) mean = history_->MeanOfLast(job.spec.user, runs_);
  return mean ? std::min(*mean, limit) : limit;
}

Instant RuntimePredictor::PredictedEnd(const Job& running, Instant now) const {
  const Instant predicted = AddDuration(running.start_time, Predict(running));
  if (now < predicted) return predicted;
  const Instant limit_end = running.EstimatedEnd();  // start + L, or kInfinite
  return now < limit_end ? limit_end : now;
}

ForecastEnd ExpectedEndForForecast(const ClusterState& state, const Job& running, Instant now) {
  const QueueSpec& queue = state.topology().queues()[running.queue].spec;
  if (queue.policy == PolicyKind::kPredictiveBackfill) {
    const RuntimePredictor predictor(state.usage().runtimes(), queue.predictive);
    const Instant end = predictor.PredictedEnd(running, now);
    return ForecastEnd{.end = end, .predicted = end != kInfinite};
  }
  if (!running.spec.run_limit) return ForecastEnd{};
  return ForecastEnd{.end = std::max(running.EstimatedEnd(), now)};
}

}  // namespace sluice::core
