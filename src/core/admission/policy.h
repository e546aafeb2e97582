// AdmissionPolicy: decides, for one queue in one cycle, which of its pending jobs start
// (R-ADM-2). Implementations: fifo, easy_backfill, bounded_backfill, predictive_backfill
// (one file each); the cycle picks one per queue by its PolicyKind (Scheduler,
// core/cycle/scheduler.h).
//
// Contract for Admit():
//  - Walk the queue's pending jobs in `order`; skip jobs ctx.DecidedThisCycle (failed by
//    this cycle's classification, or decided by the preemption phase) and jobs
//    ctx.Ineligible (held, a dependency, a begin time, a window, a limit): such a job is
//    never a head.
//  - Start a job only through ctx.Nominate + ctx.Start, so capacity stays consistent.
//  - Report the queue's blocked head, if any, with ctx.MarkBlockedHead (or NoteBlockedHead
//    and RecordAdmission for a policy that keeps the head's record itself): preemption
//    (R-CAP-3, R-CAP-4) serves it.
//  - When ctx.explain() is set, call ctx.Pend exactly once for every job left pending, with
//    at least one reason.
// Policies see the cycle only through AdmissionContext (admission_context.h).
// Stateless and const: one instance serves every queue and cycle.
#pragma once

#include <memory>

#include "core/admission/admission_context.h"
#include "core/admission/queue_order.h"
#include "core/model/cluster_state.h"

namespace sluice::core {

class AdmissionPolicy {
 public:
  virtual ~AdmissionPolicy() = default;
  // `order` walks the queue's pending jobs in this cycle's order (queue_order.h).
  virtual void Admit(const Queue& queue, const QueueOrder& order, AdmissionContext& ctx) const = 0;
};

std::unique_ptr<AdmissionPolicy> MakeFifoPolicy();
std::unique_ptr<AdmissionPolicy> MakeEasyBackfillPolicy();
std::unique_ptr<AdmissionPolicy> MakeBoundedBackfillPolicy();
std::unique_ptr<AdmissionPolicy> MakePredictiveBackfillPolicy();  // predictive_backfill.h

// The shared first phase of every policy: starts jobs in queue order while they fit.
// Returns the iterator of the first job that does not fit (the blocked head) with its
// reasons in `head_reasons`, or order.end() when every job started.
QueueOrder::iterator StartInOrder(const QueueOrder& order, AdmissionContext& ctx,
                                  PendingReasons& head_reasons);

// True when only a per-host limit kept a nomination from succeeding (HOST_LIMIT is its main
// reason): the job is skipped like one at any limit, never a head.
inline bool BlockedByLimitOnly(const AllocOutcome& outcome) {
  return !outcome.ok && outcome.reasons.main == ReasonCode::kHostLimit;
}

// Explains the jobs after `from` as waiting behind `head` (PRIORITY_WAIT, or FAIRSHARE for
// another user's job in a fairshare queue). REQUIRES: ctx.explain().
void PendBehindHead(const QueueOrder& order, QueueOrder::iterator from, const Job& head,
                    AdmissionContext& ctx);

}  // namespace sluice::core
