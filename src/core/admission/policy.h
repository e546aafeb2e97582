// AdmissionPolicy: decides, for one queue in one cycle, which of its pending jobs start
// (R-ADM-2). Implementations: fifo, easy_backfill, bounded_backfill, predictive_backfill.
//
// Contract for Admit():
//  - Walk the queue's pending jobs in queue order; skip jobs failed by this cycle's
//    classification (ctx.DecidedThisCycle).
//  - Start a job only through ctx.Nominate + ctx.Start, so capacity stays consistent.
//  - When ctx.explain is set, call ctx.Pend exactly once for every job left pending, with at
//    least one reason.
#pragma once

#include <memory>
#include <optional>

#include "core/admission/queue_order.h"
#include "core/cycle/cycle_context.h"
#include "core/model/cluster_state.h"

namespace sluice::core {

class AdmissionPolicy {
 public:
  virtual ~AdmissionPolicy() = default;
  // `order` walks the queue's pending jobs in this cycle's order (queue_order.h).
  virtual void Admit(const Queue& queue, const QueueOrder& order, CycleContext& ctx) const = 0;
};

std::unique_ptr<AdmissionPolicy> MakeFifoPolicy();
std::unique_ptr<AdmissionPolicy> MakeEasyBackfillPolicy();
std::unique_ptr<AdmissionPolicy> MakeBoundedBackfillPolicy();
std::unique_ptr<AdmissionPolicy> MakePredictiveBackfillPolicy();  // predictive_backfill.h

// The shared first phase of every policy: starts jobs in queue order while they fit.
// Returns the iterator of the first job that does not fit (the blocked head) with its
// reasons in `head_reasons`, or order.end() when every job started.
QueueOrder::iterator StartInOrder(const QueueOrder& order, CycleContext& ctx,
                                  PendingReasons& head_reasons);

// Why a job may not be tried now for a reason of policy rather than of resources — held, a
// begin time not reached, its queue's run or slot limit reached — or nullopt when it may.
// Such a job is skipped, never a head (R-ADM-2). Pure: timers come from the state.
std::optional<PendingReasons> Ineligible(const Job& job, const CycleContext& ctx);

// True when only a per-host limit kept a nomination from succeeding (HOST_LIMIT is its main
// reason): the job is skipped like one at any limit, never a head.
inline bool BlockedByLimitOnly(const AllocOutcome& outcome) {
  return !outcome.ok && outcome.reasons.main == ReasonCode::kHostLimit;
}

// A queue's share rules (R-CAP-1, R-CAP-2): QUEUE_CAPACITY when the job would take its
// queue above max_capacity, USER_LIMIT when its user already holds the queue's minimum user
// share while other active users wait. Part of Ineligible(): such a job is skipped.
std::optional<PendingReasons> QueueShareBlocks(const Job& job, const CycleContext& ctx);

// Explains the jobs after `from` as waiting behind `head` (PRIORITY_WAIT).
void PendBehindHead(const QueueOrder& order, QueueOrder::iterator from, const Job& head,
                    CycleContext& ctx);

}  // namespace sluice::core
