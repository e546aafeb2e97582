#include "core/admission/policy.h"

#include <utility>

namespace sluice::core {

PendingSet::const_iterator StartInOrder(const Queue& queue, CycleContext& ctx,
                                        PendingReasons& head_reasons) {
  auto it = queue.pending.begin();
  for (; it != queue.pending.end(); ++it) {
    const Job& job = *it->job;
    if (ctx.FailedThisCycle(job)) continue;
    if (auto why = Ineligible(job, ctx)) {  // skipped, never a head (R-ADM-2)
      if (ctx.explain) ctx.Pend(job, std::move(*why));
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

std::optional<PendingReasons> Ineligible(const Job& job, const CycleContext& ctx) {
  PendingReasons reasons;
  if (job.state == JobState::kHeld) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kHeld});
  } else if (job.spec.begin_time > ctx.now) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kBeginTime, .time = job.spec.begin_time});
  } else {
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
  if (reasons.empty()) return std::nullopt;
  return reasons;
}

void PendBehindHead(const Queue& queue, PendingSet::const_iterator from, const Job& head,
                    CycleContext& ctx) {
  for (auto it = from; it != queue.pending.end(); ++it) {
    if (ctx.FailedThisCycle(*it->job)) continue;
    if (auto why = Ineligible(*it->job, ctx)) {
      ctx.Pend(*it->job, std::move(*why));
      continue;
    }
    PendingReasons reasons;
    reasons.Add(ReasonDetail{.code = ReasonCode::kPriorityWait, .job = head.spec.id});
    ctx.Pend(*it->job, std::move(reasons));
  }
}

}  // namespace sluice::core
