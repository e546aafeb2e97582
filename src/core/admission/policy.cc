#include "core/admission/policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/admission/eligibility.h"

namespace sluice::core {

QueueOrder::iterator StartInOrder(const QueueOrder& order, CycleContext& ctx,
                                  PendingReasons& head_reasons) {
  auto it = order.begin();
  for (; it != order.end(); ++it) {
    const Job& job = *it;
    if (ctx.DecidedThisCycle(job)) continue;
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

std::optional<PendingReasons> QueueShareBlocks(const Job& job, const CycleContext& ctx) {
  const Queue& queue = ctx.state.queues()[job.queue];
  const QueueLoad& load = ctx.loads.of(job.queue);
  PendingReasons reasons;
  const int64_t queue_slots = ctx.QueueSlots(queue);
  if (queue.spec.max_capacity < 100 && !WithinMaximum(load.maximum, queue_slots, job.min_slots)) {
    reasons.Add(ReasonDetail{.code = ReasonCode::kQueueCapacity,
                             .resource = "slots",
                             .used = queue_slots,
                             .max = static_cast<int64_t>(std::floor(load.maximum + 1e-9))});
    return reasons;
  }
  if (queue.spec.user_limit_pct <= 0) return std::nullopt;
  // R-CAP-2: with k active users each may hold max(limit%, 100/k %) of the queue's current
  // capacity (its guarantee, or what it holds with this job if more) while others wait. A
  // user below that share may start a job even if the job takes it above (as Hadoop does).
  const auto k = static_cast<double>(load.active_users.size());
  const bool others_wait = std::any_of(load.active_users.begin(), load.active_users.end(),
                                       [&](const auto& user) { return user.second > 0 && user.first != job.spec.user; });
  if (k < 2 || !others_wait) return std::nullopt;
  const double share = std::max(queue.spec.user_limit_pct, 100.0 / k) / 100.0;
  const double capacity = std::max(load.guarantee, static_cast<double>(queue_slots + job.min_slots));
  const int64_t user_slots = ctx.UserSlots(queue, job.spec.user);
  if (static_cast<double>(user_slots) + 1e-9 < share * capacity) return std::nullopt;
  reasons.Add(ReasonDetail{.code = ReasonCode::kUserLimit,
                           .resource = "slots",
                           .scope = "user " + job.spec.user,
                           .used = user_slots,
                           .max = static_cast<int64_t>(std::ceil(share * capacity - 1e-9))});
  return reasons;
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
  if (auto why = QueueShareBlocks(job, ctx)) return why;
  if (ctx.limits.any()) return ctx.limits.Blocked(job);  // named limits (R-Q-2)
  return std::nullopt;
}

void PendBehindHead(const QueueOrder& order, QueueOrder::iterator from, const Job& head,
                    CycleContext& ctx) {
  for (auto it = from; it != order.end(); ++it) {
    if (ctx.DecidedThisCycle(*it)) continue;
    if (auto why = Ineligible(*it, ctx)) {
      ctx.Pend(*it, std::move(*why));
      continue;
    }
    PendingReasons reasons;
    // In a fairshare queue a job behind another user's head waits for fairshare order.
    const bool fairshare = order.computed() && it->spec.user != head.spec.user;
    reasons.Add(ReasonDetail{.code = fairshare ? ReasonCode::kFairshare : ReasonCode::kPriorityWait,
                             .job = head.spec.id});
    ctx.Pend(*it, std::move(reasons));
  }
}

}  // namespace sluice::core
