// bounded_backfill (R-ADM-2, seeds/000): while the head is temporarily unavailable, later
// jobs are scanned in queue order and the first whose full allocation succeeds is admitted,
// counting one bypass of the head; then the head is evaluated again and the scan resumes.
// When the head has been bypassed max_bypass times, or has waited max_head_wait since it
// was first blocked, its aging gate activates: no later job of its queue is admitted, and
// later queues may not use the hosts its request can use, so released slots accumulate for
// it. The gate holds no allocation. Counters live in the job's admission record and are
// never reset but by the job leaving the queue.
//
// Steps, per queue and cycle:
//  1. NextHead: the first eligible job (held jobs are skipped, never heads).
//  2. Nominate the head; if it fits, start it and go to 1.
//  3. Blocked: set first_blocked if unset (UpdateAdmission); check the gate (GateDue).
//  4. Gate active: WithholdHostsOf the head, explain the rest as GATED, stop.
//  5. Else scan later jobs from where the last scan stopped; admit the first that fits and
//     bypass the head once (UpdateAdmission); go to 2. Nothing fits: stop.
#include <unordered_set>
#include <utility>

#include "core/admission/policy.h"
#include "core/admission/shared_reasons.h"

namespace sluice::core {
namespace {

struct HeadState {
  const Job* job = nullptr;
  AdmissionRecord record;  // as updated during this cycle
};

bool GateDue(const QueueSpec& spec, const AdmissionRecord& record, Instant now) {
  if (record.gate_active()) return true;
  if (record.bypass_count >= spec.max_bypass) return true;
  return record.first_blocked && now - *record.first_blocked >= spec.max_head_wait;
}

void Record(AdmissionContext& ctx, const HeadState& head) {
  ctx.RecordAdmission(*head.job, head.record);
}

// The jobs this Admit call has explained: a skipped job passed by several scans (step 5, the
// gated walk, the final explanation) gets its reasons once. Lookups only, never iterated.
using Explained = std::unordered_set<JobId>;

QueueOrder::iterator NextEligible(const QueueOrder& order, QueueOrder::iterator it,
                                  AdmissionContext& ctx, Explained& explained) {
  for (; it != order.end(); ++it) {
    const Job& job = *it;
    if (ctx.DecidedThisCycle(job) || ctx.StartedThisCycle(job)) continue;
    if (auto why = ctx.Ineligible(job)) {
      if (ctx.explain() && explained.insert(job.spec.id).second) ctx.Pend(job, std::move(*why));
      continue;
    }
    return it;
  }
  return it;
}

// Explains every job after `from` that is still pending as waiting behind the gated head.
void PendGated(const QueueOrder& order, QueueOrder::iterator from, const HeadState& head,
               AdmissionContext& ctx, Explained& explained) {
  SharedReasons gated({.job = head.job->spec.id, .time = *head.record.gate_since});
  for (auto it = from; it != order.end(); ++it) {
    const Job& job = *it;
    if (ctx.DecidedThisCycle(job) || ctx.StartedThisCycle(job)) continue;
    if (auto why = ctx.Ineligible(job)) {
      if (explained.insert(job.spec.id).second) ctx.Pend(job, std::move(*why));
      continue;
    }
    ctx.Pend(job, gated.For(ReasonCode::kGated));
  }
}

class BoundedBackfillPolicy final : public AdmissionPolicy {
 public:
  void Admit(const Queue& queue, const QueueOrder& order, AdmissionContext& ctx) const override {
    Explained explained;
    auto head_it = NextEligible(order, order.begin(), ctx, explained);
    auto scan_from = head_it;
    HeadState head;
    while (head_it != order.end()) {
      if (head.job != &*head_it) head = HeadState{&*head_it, head_it->admission};
      AllocOutcome outcome = ctx.Nominate(*head.job);  // 2.
      if (BlockedByLimitOnly(outcome)) {               // a job at a limit is skipped, never a head
        if (ctx.explain()) ctx.Pend(*head.job, std::move(outcome.reasons));
        head_it = NextEligible(order, std::next(head_it), ctx, explained);
        scan_from = head_it;
        continue;
      }
      if (outcome.ok) {
        ctx.Start(*head.job, std::move(outcome.allocation), /*backfilled=*/false);
        head_it = NextEligible(order, std::next(head_it), ctx, explained);
        scan_from = head_it;
        continue;
      }
      // 3. The head is blocked.
      ctx.NoteBlockedHead(*head.job);
      bool changed = false;
      if (!head.record.first_blocked) {
        head.record.first_blocked = ctx.now();
        changed = true;
      }
      if (!head.record.gate_active() && GateDue(queue.spec, head.record, ctx.now())) {
        head.record.gate_since = ctx.now();
        changed = true;
      }
      if (changed) Record(ctx, head);
      if (!head.record.gate_active()) {  // the aging deadline is a timer (R-SIM-1b)
        ctx.WakeAt(AddDuration(*head.record.first_blocked, queue.spec.max_head_wait));
      }
      if (head.record.gate_active()) {  // 4.
        ctx.WithholdHostsOf(*head.job, *head.record.gate_since);
        if (ctx.explain()) {
          ctx.Pend(*head.job, std::move(outcome.reasons));
          PendGated(order, std::next(head_it), head, ctx, explained);
        }
        return;
      }
      // 5. Scan later jobs for the first that fits.
      auto it = NextEligible(order, std::next(scan_from), ctx, explained);
      for (; it != order.end(); it = NextEligible(order, std::next(it), ctx, explained)) {
        AllocOutcome later = ctx.Nominate(*it);
        if (!later.ok) continue;
        ctx.Start(*it, std::move(later.allocation), /*backfilled=*/true);
        ++head.record.bypass_count;
        Record(ctx, head);
        break;
      }
      if (it == order.end()) {
        if (ctx.explain())
          ExplainBlocked(order, head_it, std::move(outcome.reasons), ctx, explained);
        return;
      }
      scan_from = it;
    }
  }

 private:
  // The head keeps its own reasons; each later job its own (it was nominated and failed).
  static void ExplainBlocked(const QueueOrder& order, QueueOrder::iterator head_it,
                             PendingReasons head_reasons, AdmissionContext& ctx,
                             Explained& explained) {
    ctx.Pend(*head_it, std::move(head_reasons));
    for (auto it = NextEligible(order, std::next(head_it), ctx, explained); it != order.end();
         it = NextEligible(order, std::next(it), ctx, explained)) {
      ctx.Pend(*it, ctx.Nominate(*it).reasons);
    }
  }
};

}  // namespace

std::unique_ptr<AdmissionPolicy> MakeBoundedBackfillPolicy() {
  return std::make_unique<BoundedBackfillPolicy>();
}

}  // namespace sluice::core
