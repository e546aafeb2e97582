#include "core/admission/head_protection.h"

#include <utility>

#include "core/admission/predicted_reservation.h"

namespace sluice::core {
namespace {

// Started-this-cycle jobs have no start sequence yet; they follow every running job (as in
// easy_backfill_policy.cc, so the two compute the same reservation).
constexpr uint64_t kThisCycleOrderBase = uint64_t{1} << 62;

bool EndsBy(Instant end, const Reservation& reservation) {
  return end != kInfinite && end <= reservation.shadow;
}

}  // namespace

Instant HeadProtection::PredictedEnd(const Job& candidate, Instant now) const {
  return AddDuration(now, predictor_->Predict(candidate));
}

Reservation ReserveFromRunLimits(int64_t needed, AdmissionContext& ctx) {
  std::vector<Release> started;
  started.reserve(ctx.started().size());
  for (size_t i = 0; i < ctx.started().size(); ++i) {
    const Job& job = *ctx.started()[i].job;
    started.push_back(
        Release{.expected_end = AddDuration(ctx.now(), job.spec.run_limit.value_or(kInfinite)),
                .order = kThisCycleOrderBase + i,
                .slots = ctx.started()[i].slots});
  }
  return ComputeReservation(needed, ctx.TotalFree(), ctx.now(), ctx.state().running_by_end(),
                            started);
}

HeadProtection::HeadProtection(const Job& head, std::vector<const Job*> waiters,
                               const RuntimePredictor* predictor)
    : head_(&head), waiters_(std::move(waiters)), predictor_(predictor) {}

void HeadProtection::Compute(AdmissionContext& ctx) {
  if (computed_) return;
  computed_ = true;
  guards_.reserve(1 + waiters_.size());
  guards_.push_back(Guard{head_, ReserveFromRunLimits(head_->min_slots, ctx)});
  for (const Job* waiter : waiters_) {
    guards_.push_back(Guard{waiter, ReserveFromRunLimits(waiter->min_slots, ctx)});
  }
  if (predictor_ != nullptr) {
    predicted_ = Guard{head_, ReserveFromPredictions(head_->min_slots, *predictor_, ctx)};
  }
}

const Reservation& HeadProtection::HeadReservation(AdmissionContext& ctx) {
  Compute(ctx);
  return guards_.front().reservation;
}

const Guard* HeadProtection::Delays(const Job& candidate, int64_t slots, AdmissionContext& ctx) {
  Compute(ctx);
  const Instant end = AddDuration(ctx.now(), candidate.spec.run_limit.value_or(kInfinite));
  for (const Guard& guard : guards_) {
    if (guard.job == &candidate) continue;
    if (!EndsBy(end, guard.reservation) && slots > guard.reservation.extra) return &guard;
  }
  if (predicted_ && !EndsBy(PredictedEnd(candidate, ctx.now()), predicted_->reservation) &&
      slots > predicted_->reservation.extra) {
    return &*predicted_;
  }
  return nullptr;
}

void HeadProtection::Charge(const Job& candidate, int64_t slots, Instant now) {
  const Instant end = AddDuration(now, candidate.spec.run_limit.value_or(kInfinite));
  for (Guard& guard : guards_) {
    if (guard.job == &candidate) continue;
    if (!EndsBy(end, guard.reservation)) guard.reservation.extra -= slots;
  }
  if (predicted_ && !EndsBy(PredictedEnd(candidate, now), predicted_->reservation)) {
    predicted_->reservation.extra -= slots;
  }
  // A waiter that started needs no reservation any more.
  std::erase_if(guards_, [&](const Guard& guard) { return guard.job == &candidate; });
}

}  // namespace sluice::core
