#include "core/admission/policy.h"

#include <utility>

namespace sluice::core {

PendingSet::const_iterator StartInOrder(const Queue& queue, CycleContext& ctx,
                                        PendingReasons& head_reasons) {
  auto it = queue.pending.begin();
  for (; it != queue.pending.end(); ++it) {
    const Job& job = *it->job;
    if (ctx.FailedThisCycle(job)) continue;
    if (job.state == JobState::kHeld) {  // held jobs are skipped, never heads (R-ADM-2)
      if (ctx.explain) ctx.Pend(job, HeldReasons());
      continue;
    }
    AllocOutcome outcome = ctx.Nominate(job);
    if (!outcome.ok) {
      head_reasons = std::move(outcome.reasons);
      return it;
    }
    ctx.Start(job, std::move(outcome.allocation), /*backfilled=*/false);
  }
  return it;
}

PendingReasons HeldReasons() {
  PendingReasons reasons;
  reasons.Add(ReasonDetail{.code = ReasonCode::kHeld});
  return reasons;
}

void PendBehindHead(const Queue& queue, PendingSet::const_iterator from, const Job& head,
                    CycleContext& ctx) {
  for (auto it = from; it != queue.pending.end(); ++it) {
    if (ctx.FailedThisCycle(*it->job)) continue;
    if (it->job->state == JobState::kHeld) {
      ctx.Pend(*it->job, HeldReasons());
      continue;
    }
    PendingReasons reasons;
    reasons.Add(ReasonDetail{.code = ReasonCode::kPriorityWait, .job = head.spec.id});
    ctx.Pend(*it->job, std::move(reasons));
  }
}

}  // namespace sluice::core
