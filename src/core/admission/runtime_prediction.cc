#include "core/admission/runtime_prediction.h"

#include <algorithm>
#include <optional>

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

namespace {

// When the drivers end a job inside an advance reservation (R-RSV-2): at the end of the window
// it started in + the reservation's overrun (the controller's run limit, the simulator's cut),
// no earlier than `now`; kInfinite for a job in no reservation, or in one no longer known.
Instant ReservationEnd(const ClusterState& state, const Job& running, Instant now) {
  if (running.spec.reservation.empty()) return kInfinite;
  const ReservationBook& book = state.reservations();
  const int32_t r = book.Find(running.spec.reservation);
  if (r < 0) return kInfinite;
  const std::optional<ReservationWindow> window = book.OpenWindow(r, running.start_time);
  if (!window) return kInfinite;
  return std::max(AddDuration(window->end, book.spec(r).overrun), now);
}

ForecastEnd EndByRunLimitOrPrediction(const ClusterState& state, const Job& running, Instant now) {
  const QueueSpec& queue = state.topology().queues()[running.queue].spec;
  if (queue.policy == PolicyKind::kPredictiveBackfill) {
    const RuntimePredictor predictor(state.usage().runtimes(), queue.predictive);
    const Instant end = predictor.PredictedEnd(running, now);
    return ForecastEnd{.end = end, .predicted = end != kInfinite};
  }
  if (!running.spec.run_limit) return ForecastEnd{};
  return ForecastEnd{.end = std::max(running.EstimatedEnd(), now)};
}

}  // namespace

ForecastEnd ExpectedEndForForecast(const ClusterState& state, const Job& running, Instant now) {
  ForecastEnd end = EndByRunLimitOrPrediction(state, running, now);
  const Instant cut = ReservationEnd(state, running, now);
  if (cut < end.end) end = ForecastEnd{.end = cut};  // the window ends it, not a prediction
  return end;
}

}  // namespace sluice::core
