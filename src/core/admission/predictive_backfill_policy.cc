#include <algorithm>
#include <utility>
#include <vector>

#include "core/admission/backfill_order.h"
#include "core/admission/head_protection.h"
#include "core/admission/predictive_backfill.h"
#include "core/admission/runtime_prediction.h"

namespace sluice::core {
namespace {

struct Candidates {
  std::vector<BackfillCandidate> jobs;  // in the order they are tried
  std::vector<const Job*> waiters;      // protected waiters, in queue order
  std::vector<const Job*> top;          // the next reserve_top - 1 eligible jobs, in queue order
};

// Predictions of one cycle. Without a true runtime (the study's oracle) a prediction depends
// only on the job's user and run limit, and consecutive candidates often share both (a
// user's batch): the last one is reused instead of looking the history up again.
class CyclePredictions {
 public:
  CyclePredictions(const RuntimeHistory& history, const PredictiveKnobs& knobs)
      : history_(&history), predictor_(history, knobs) {}

  Duration Predict(const Job& job) {
    if (history_->TrueRuntime(job.spec.id)) return predictor_.Predict(job);
    if (last_ == nullptr || job.spec.user != last_->spec.user ||
        job.spec.run_limit != last_->spec.run_limit) {
      last_ = &job;
      last_predicted_ = predictor_.Predict(job);
    }
    return last_predicted_;
  }

 private:
  const RuntimeHistory* history_;
  RuntimePredictor predictor_;
  const Job* last_ = nullptr;  // the last job looked up, whose prediction is last_predicted_
  Duration last_predicted_ = 0;
};

// Step 3: the jobs after the head not decided yet, in the configured order.
Candidates CollectCandidates(const QueueOrder& order, QueueOrder::iterator head_it,
                             const PredictiveKnobs& knobs, AdmissionContext& ctx) {
  CyclePredictions predictions(ctx.state().usage().runtimes(), knobs);
  const bool protect = knobs.reserve_after > 0 && knobs.reserve_depth > 0;
  const size_t top = static_cast<size_t>(std::max(knobs.reserve_top, 1) - 1);
  // Unexplained, a job needing more slots than are free now can start at no point of step 4
  // (free slots only shrink; Nominate refuses it unasked): it is neither predicted nor sorted,
  // which on long queues is most of this policy's cost. It may still be a waiter or in top.
  const bool fitting_only = !ctx.explain();
  const int64_t free_now = ctx.TotalFree();
  Candidates out;
  size_t position = 0;
  for (auto it = std::next(head_it); it != order.end(); ++it, ++position) {
    const Job& job = *it;
    if (ctx.DecidedThisCycle(job)) continue;
    const Duration waited = ctx.now() - job.spec.submit_time;
    if (!fitting_only || job.min_slots <= free_now) {
      out.jobs.push_back(BackfillCandidate{.job = &job,
                                           .position = position,
                                           .predicted = predictions.Predict(job),
                                           .aged = IsAged(job, waited, knobs)});
    }
    if (protect && static_cast<int32_t>(out.waiters.size()) < knobs.reserve_depth &&
        waited >= knobs.reserve_after && !ctx.Ineligible(job)) {
      out.waiters.push_back(&job);
    }
    if (out.top.size() < top && !ctx.Ineligible(job)) out.top.push_back(&job);
  }
  SortCandidates(out.jobs, knobs.order, ctx.now());
  return out;
}

void PendReserved(const Job& job, const Guard& guard, AdmissionContext& ctx) {
  PendingReasons reasons;
  reasons.Add(ReasonDetail{
      .code = ReasonCode::kReserved, .job = guard.job->spec.id, .time = guard.reservation.shadow});
  ctx.Pend(job, std::move(reasons));
}

// Step 4 for one candidate.
void TryBackfill(const Job& job, HeadProtection& protection, AdmissionContext& ctx) {
  // As easy_backfill: unexplained, a job wider than the free slots (which earlier starts of
  // this step shrank) is passed over unasked; nothing starts during the checks it skips,
  // so the reservations they would compute first are computed later from the same jobs.
  if (!ctx.explain() && job.min_slots > ctx.TotalFree()) return;
  if (auto why = ctx.Ineligible(job)) {
    if (ctx.explain()) ctx.Pend(job, std::move(*why));
    return;
  }
  // Without an explanation to give, a job that would delay a guard whatever its shape is
  // not nominated (its slots only grow with its allocation).
  if (!ctx.explain() && protection.Delays(job, job.min_slots, ctx) != nullptr) return;
  AllocOutcome outcome = ctx.Nominate(job);
  if (!outcome.ok) {
    if (ctx.explain()) ctx.Pend(job, std::move(outcome.reasons));
    return;
  }
  const int32_t slots = outcome.allocation.TotalSlots();
  if (const Guard* guard = protection.Delays(job, slots, ctx)) {
    if (ctx.explain()) PendReserved(job, *guard, ctx);
    return;
  }
  protection.Charge(job, slots, ctx.now());
  ctx.Start(job, std::move(outcome.allocation), /*backfilled=*/true);
}

class PredictiveBackfillPolicy final : public AdmissionPolicy {
 public:
  void Admit(const Queue& queue, const QueueOrder& order, AdmissionContext& ctx) const override {
    PendingReasons head_reasons;
    auto head_it = StartInOrder(order, ctx, head_reasons);  // 1.
    if (head_it == order.end()) return;
    const Job& head = *head_it;
    ctx.MarkBlockedHead(head);  // 2.
    if (ctx.explain()) ctx.Pend(head, std::move(head_reasons));
    if (!ctx.explain() && ctx.TotalFree() == 0) return;  // nothing more can start
    Candidates candidates = CollectCandidates(order, head_it, queue.spec.predictive, ctx);  // 3.
    const RuntimePredictor predictor(ctx.state().usage().runtimes(), queue.spec.predictive);
    HeadProtection protection(head, std::move(candidates.waiters),
                              queue.spec.predictive.predicted_guard ? &predictor : nullptr,
                              std::move(candidates.top));
    for (const BackfillCandidate& candidate : candidates.jobs) {  // 4.
      if (!ctx.explain() && ctx.TotalFree() == 0) break;
      TryBackfill(*candidate.job, protection, ctx);
    }
  }
};

}  // namespace

std::unique_ptr<AdmissionPolicy> MakePredictiveBackfillPolicy() {
  return std::make_unique<PredictiveBackfillPolicy>();
}

}  // namespace sluice::core
