#include "core/admission/policy.h"

#include <utility>

#include "core/admission/shared_reasons.h"

namespace sluice::core {

QueueOrder::iterator StartInOrder(const QueueOrder& order, AdmissionContext& ctx,
                                  PendingReasons& head_reasons) {
  auto it = order.begin();
  for (; it != order.end(); ++it) {
    const Job& job = *it;
    if (ctx.DecidedThisCycle(job)) continue;
    if (auto why = ctx.Ineligible(job)) {  // skipped, never a head (R-ADM-2)
      if (ctx.explain()) ctx.Pend(job, std::move(*why));
      continue;
    }
    AllocOutcome outcome = ctx.Nominate(job);
    if (!outcome.ok && BlockedByLimitOnly(outcome)) {  // limits skip, never block (R-Q-2)
      if (ctx.explain()) ctx.Pend(job, std::move(outcome.reasons));
      continue;
    }
    if (!outcome.ok) {
      head_reasons = std::move(outcome.reasons);
      return it;
    }
    ctx.Start(job, std::move(outcome.allocation), /*backfilled=*/false);
  }
  return it;
}

void PendBehindHead(const QueueOrder& order, QueueOrder::iterator from, const Job& head,
                    AdmissionContext& ctx) {
  SharedReasons behind({.job = head.spec.id});
  for (auto it = from; it != order.end(); ++it) {
    if (ctx.DecidedThisCycle(*it)) continue;
    if (auto why = ctx.Ineligible(*it)) {
      ctx.Pend(*it, std::move(*why));
      continue;
    }
    // In a fairshare queue a job behind another user's head waits for fairshare order.
    const bool fairshare = order.computed() && it->spec.user != head.spec.user;
    ctx.Pend(*it, behind.For(fairshare ? ReasonCode::kFairshare : ReasonCode::kPriorityWait));
  }
}

}  // namespace sluice::core
