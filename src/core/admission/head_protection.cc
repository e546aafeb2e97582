#include "core/admission/head_protection.h"

#include <algorithm>
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

Reservation ReserveFromRunLimits(const Job& job, AdmissionContext& ctx) {
  std::vector<Release> started;
  started.reserve(ctx.started().size());
  for (size_t i = 0; i < ctx.started().size(); ++i) {
    const Job& running = *ctx.started()[i].job;
    started.push_back(
        Release{.expected_end = AddDuration(ctx.now(), running.spec.run_limit.value_or(kInfinite)),
                .order = kThisCycleOrderBase + i,
                .slots = ctx.started()[i].slots});
  }
  return ComputeReservation(job.min_slots, ctx.FreeFor(job), ctx.now(),
                            ctx.state().running_by_end(), started);
}

HeadProtection::HeadProtection(const Job& head, std::vector<const Job*> waiters,
                               const RuntimePredictor* predictor, std::vector<const Job*> top)
    : head_(&head), waiters_(std::move(waiters)), predictor_(predictor), top_(std::move(top)) {}

// Guard 3: the profile of run-limit ends, and each of the first K jobs in queue order placed
// at its earliest fit after the ones before it.
void HeadProtection::ComputeJoint(AdmissionContext& ctx) {
  const Instant now = ctx.now();
  std::vector<Release> releases;
  releases.reserve(ctx.state().running_by_end().size() + ctx.started().size());
  for (const RunningByEnd& r : ctx.state().running_by_end()) {
    releases.push_back(Release{.expected_end = r.end, .slots = r.slots});
  }
  for (const StartedJob& started : ctx.started()) {
    releases.push_back(
        Release{.expected_end = AddDuration(now, started.job->spec.run_limit.value_or(kInfinite)),
                .slots = started.slots});
  }
  profile_.emplace(now, ctx.TotalFree(), releases);
  joint_.reserve(1 + top_.size());
  auto place = [&](const Job* job) {
    const Duration limit = job->spec.run_limit.value_or(kInfinite);
    const Instant start = profile_->EarliestFit(job->min_slots, limit);
    if (start == kInfinite) return;  // never fits: nothing to protect
    const Instant end = AddDuration(start, limit);
    profile_->Reserve(start, end, job->min_slots);
    joint_.push_back(Joint{.guard = Guard{job, Reservation{.shadow = start, .extra = 0}},
                           .end = end,
                           .slots = job->min_slots});
  };
  place(head_);
  for (const Job* job : top_) place(job);
}

std::optional<Instant> HeadProtection::JointStart(const Job& job, AdmissionContext& ctx) {
  Compute(ctx);
  for (const Joint& joint : joint_) {
    if (joint.guard.job == &job) return joint.guard.reservation.shadow;
  }
  return std::nullopt;
}

const Guard* HeadProtection::DelaysJoint(const Job& candidate, Instant now, Instant end,
                                         int64_t slots) {
  auto own = std::find_if(joint_.begin(), joint_.end(),
                          [&](const Joint& j) { return j.guard.job == &candidate; });
  if (own != joint_.end()) profile_->Unreserve(own->guard.reservation.shadow, own->end, own->slots);
  const bool fits = profile_->Fits(now, end, slots);
  if (own != joint_.end()) profile_->Reserve(own->guard.reservation.shadow, own->end, own->slots);
  if (fits) return nullptr;
  // Name the first reservation (in queue order) that overlaps [now, end).
  for (auto it = joint_.begin(); it != joint_.end(); ++it) {
    if (it != own && it->guard.reservation.shadow < end) return &it->guard;
  }
  return &joint_.front().guard;
}

void HeadProtection::Compute(AdmissionContext& ctx) {
  if (computed_) return;
  computed_ = true;
  guards_.reserve(1 + waiters_.size());
  guards_.push_back(Guard{head_, ReserveFromRunLimits(*head_, ctx)});
  for (const Job* waiter : waiters_) {
    guards_.push_back(Guard{waiter, ReserveFromRunLimits(*waiter, ctx)});
  }
  if (predictor_ != nullptr) {
    predicted_ = Guard{head_, ReserveFromPredictions(head_->min_slots, *predictor_, ctx)};
  }
  if (!top_.empty()) ComputeJoint(ctx);
}

const Reservation& HeadProtection::HeadReservation(AdmissionContext& ctx) {
  Compute(ctx);
  return guards_.front().reservation;
}

const Guard* HeadProtection::Delays(const Job& candidate, int64_t slots, AdmissionContext& ctx) {
  Compute(ctx);
  const Instant end = ctx.EndIfStartedNow(candidate);
  for (const Guard& guard : guards_) {
    if (guard.job == &candidate) continue;
    if (!EndsBy(end, guard.reservation) && slots > guard.reservation.extra) return &guard;
  }
  if (profile_ && !joint_.empty()) {
    if (const Guard* guard = DelaysJoint(candidate, ctx.now(), end, slots)) return guard;
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
  if (profile_) {
    auto own = std::find_if(joint_.begin(), joint_.end(),
                            [&](const Joint& j) { return j.guard.job == &candidate; });
    if (own != joint_.end()) {
      profile_->Unreserve(own->guard.reservation.shadow, own->end, own->slots);
      joint_.erase(own);
    }
    profile_->Reserve(now, end, slots);
  }
}

}  // namespace sluice::core
