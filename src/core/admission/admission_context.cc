#include "core/admission/admission_context.h"

#include <algorithm>
#include <cmath>

#include "core/admission/eligibility.h"

namespace sluice::core {
namespace {

// A queue's share rules (R-CAP-1, R-CAP-2): QUEUE_CAPACITY when the job would take its queue
// above max_capacity, USER_LIMIT when its user already holds the queue's minimum user share
// while other active users wait.
std::optional<PendingReasons> QueueShareBlocks(const Job& job, const CycleContext& ctx) {
  const Queue& queue = ctx.state.topology().queues()[job.queue];
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
  const bool others_wait =
      std::any_of(load.active_users.begin(), load.active_users.end(),
                  [&](const auto& user) { return user.second > 0 && user.first != job.spec.user; });
  if (k < 2 || !others_wait) return std::nullopt;
  const double share = std::max(queue.spec.user_limit_pct, 100.0 / k) / 100.0;
  const double capacity =
      std::max(load.guarantee, static_cast<double>(queue_slots + job.min_slots));
  const int64_t user_slots = ctx.UserSlots(queue, job.spec.user);
  if (static_cast<double>(user_slots) + 1e-9 < share * capacity) return std::nullopt;
  reasons.Add(ReasonDetail{.code = ReasonCode::kUserLimit,
                           .resource = "slots",
                           .scope = "user " + job.spec.user,
                           .used = user_slots,
                           .max = static_cast<int64_t>(std::ceil(share * capacity - 1e-9))});
  return reasons;
}

}  // namespace

std::optional<PendingReasons> AdmissionContext::Ineligible(const Job& job) const {
  const CycleContext& ctx = cycle_;
  // Held, dependency, begin time and dispatch window first (eligibility.h). Most jobs are
  // eligible: IsEligible answers the same question without building reasons.
  if (!IsEligible(job, ctx.state, ctx.now)) return CheckEligibility(job, ctx.state, ctx.now);
  const QueueSpec& spec = ctx.state.topology().queues()[job.queue].spec;
  // No run or slot limit, maximum capacity, user share or named limit: nothing below applies.
  if (!spec.run_limit && !spec.slot_limit && spec.max_capacity >= 100 && spec.user_limit_pct <= 0 &&
      !ctx.limits.any()) {
    return std::nullopt;
  }
  PendingReasons reasons;
  {
    const Queue& queue = ctx.state.topology().queues()[job.queue];
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

}  // namespace sluice::core
