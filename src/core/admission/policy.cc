#include "core/admission/policy.h"

#include <utility>

#include "core/admission/eligibility.h"

namespace sluice::core {

QueueOrder::iterator StartInOrder(const QueueOrder& order, CycleContext& ctx,
                                  PendingReasons& head_reasons) {
  auto it = order.begin();
  for (; it != order.end(); ++it) {
    const Job& job = *it;
    if (ctx.FailedThisCycle(job)) continue;
    if (auto why = Ineligible(job, ctx)) {  // skipped, never a head (R-ADM-2)
      if (ctx.explain) ctx.Pend(job, std::move(*why));
      continue;
    }
    AllocOutcome outcome = ctx.Nominate(job);
    if (!outcome.ok && BlockedByLimitOnly(outcome)) {  // limits skip, never block (R-Q-2)
      if (ctx.explain) ctx.Pend(job, std::move(outcome.reasons));
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

std::optional<PendingReasons> Ineligible(const Job& job, const CycleContext& ctx) {
  // Held, dependency, begin time and dispatch window first (eligibility.h).
  if (auto why = CheckEligibility(job, ctx.state, ctx.now)) return why;
  PendingReasons reasons;
  {
    const Queue& queue = ctx.state.queues()[job.queue];
    if (queue.spec.run_limit && ctx.QueueRunning(queue) >= *queue.spec.run_limit) {
      reasons.Add(ReasonDetail{.code = ReasonCode::kQueueRunLimit,
                               .resource = "jobs",
                               .needed = *queue.spec.run_limit,
                               .available = ctx.QueueRunning(queue)});
    } else if (queue.spec.slot_limit &&
               ctx.QueueSlots(queue) + job.min_slots > *queue.spec.slot_limit) {
      reasons.Add(ReasonDetail{.code = ReasonCode::kQueueRunLimit,
                               .resource = "slots",
                               .needed = *queue.spec.slot_limit,
                               .available = ctx.QueueSlots(queue)});
    }
  }
  if (!reasons.empty()) return reasons;
  if (ctx.limits.any()) return ctx.limits.Blocked(job);  // named limits (R-Q-2)
  return std::nullopt;
}

void PendBehindHead(const QueueOrder& order, QueueOrder::iterator from, const Job& head,
                    CycleContext& ctx) {
  for (auto it = from; it != order.end(); ++it) {
    if (ctx.FailedThisCycle(*it)) continue;
    if (auto why = Ineligible(*it, ctx)) {
      ctx.Pend(*it, std::move(*why));
      continue;
    }
    PendingReasons reasons;
    reasons.Add(ReasonDetail{.code = ReasonCode::kPriorityWait, .job = head.spec.id});
    ctx.Pend(*it, std::move(reasons));
  }
}

}  // namespace sluice::core
