// AdmissionContext: what an AdmissionPolicy may see and do in one cycle (R-ADM-2), and no
// more. The cycle's working set (cycle_context.h: capacity, limits, loads, the unsatisfiable
// cache, the result) stays the cycle's own; a policy reaches it only through these calls, so
// every start debits capacity and limits, every nomination is counted and cached, and every
// decision lands in the result in the order it was made.
//
// Representation: a reference to the cycle's CycleContext; the calls forward to it (inline,
// so the cycle's inner loop costs what it did when policies held the whole context).
// Lives only for the duration of RunCycle. Thread-safety: none (one cycle, one thread).
#pragma once

#include <optional>
#include <span>

#include "core/admission/cycle_context.h"
#include "core/alloc/allocator.h"
#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"

namespace sluice::core {

class AdmissionContext {
 public:
  explicit AdmissionContext(CycleContext& cycle) : cycle_(cycle) {}

  // --- What a policy reads.
  const ClusterState& state() const { return cycle_.state; }
  Instant now() const { return cycle_.now; }
  // Whether the cycle explains: then every job a policy leaves pending gets exactly one Pend.
  bool explain() const { return cycle_.explain; }
  // Free slots on hosts that accept work, as of this point of the cycle.
  int64_t TotalFree() const { return cycle_.TotalFree(); }
  // When `job` would end if it started now (its run limit; a job inside an advance
  // reservation ends with its window): what backfill compares with a reservation.
  Instant EndIfStartedNow(const Job& job) const { return cycle_.EndIfStartedNow(job); }
  // The free slots `job` may use now: TotalFree without hosts advance reservations keep
  // from it (R-RSV-2); backfill reservations count these.
  int64_t FreeFor(const Job& job) const { return cycle_.FreeFor(job); }
  // The jobs started earlier in this cycle, in start order (backfill counts them running).
  std::span<const StartedJob> started() const { return cycle_.started; }
  // Jobs this cycle decided before the policies and that they must skip: failed by
  // classification, or started / kept PREEMPTING by the preemption phase.
  bool DecidedThisCycle(const Job& job) const { return cycle_.DecidedThisCycle(job); }
  bool StartedThisCycle(const Job& job) const { return cycle_.StartedThisCycle(job); }
  // Why a job may not be tried now for a reason of policy rather than of resources — held,
  // a dependency, a begin time or window (eligibility.h), its queue's run or slot limit
  // (QUEUE_RUNLIMIT), its queue's maximum capacity or user share (QUEUE_CAPACITY,
  // USER_LIMIT), a named limit (LIMIT) — or nullopt when it may. Such a job is skipped,
  // never a head (R-ADM-2). Counts this cycle's starts. Defined in admission_context.cc.
  std::optional<PendingReasons> Ineligible(const Job& job) const;

  // --- What a policy does.
  // Nominates `job`'s whole request on the cycle's capacity, counting the attempt; a request
  // that already failed this cycle fails again from the unsatisfiable cache (R-AL-5).
  // Outcomes: ok with an allocation to pass to Start, or !ok with the reasons (HOST_LIMIT as
  // the main reason: only a per-host limit stood in the way; the job is skipped). When
  // !explain() the reasons of a failure may be empty, except HOST_LIMIT's: read them only to
  // explain or through BlockedByLimitOnly.
  AllocOutcome Nominate(const Job& job) { return cycle_.Nominate(job); }
  // Starts `job` on `allocation` (from Nominate in this cycle): debits capacity and limits
  // and emits StartJob. `backfilled`: started ahead of a blocked head.
  void Start(const Job& job, Allocation allocation, bool backfilled) {
    cycle_.Start(job, std::move(allocation), backfilled);
  }
  // Emits PendJob with the reasons `job` stays pending. REQUIRES: explain().
  void Pend(const Job& job, PendingReasons reasons) { cycle_.Pend(job, std::move(reasons)); }
  // The queue's head is blocked: it becomes the queue's candidate for preemption, and its
  // first-blocked time is set (UpdateAdmission) the first cycle this happens (R-ADM-2).
  void MarkBlockedHead(const Job& head) { cycle_.MarkBlockedHead(head); }
  // As MarkBlockedHead, without the first-blocked record: for a policy that keeps the head's
  // admission record itself (bounded_backfill) and emits it with RecordAdmission.
  void NoteBlockedHead(const Job& head) { cycle_.NoteBlockedHead(head); }
  // Emits UpdateAdmission with `job`'s new head fields (R-ADM-2, R-ADM-3).
  void RecordAdmission(const Job& job, const AdmissionRecord& record) {
    cycle_.result.decisions.push_back(
        UpdateAdmission{job.spec.id, record.bypass_count, record.first_blocked, record.gate_since});
  }
  // Asks for a cycle at `t` without an event (an aging deadline); ignored unless t > now().
  void WakeAt(Instant t) { cycle_.WakeAt(t); }
  // A gated head's hosts (R-ADM-2): every host of its queue that some part of its request
  // could select is withheld from the queues after it in this cycle.
  void WithholdHostsOf(const Job& head, Instant gate_since) {
    cycle_.WithholdHostsOf(head, gate_since);
  }

 private:
  CycleContext& cycle_;
};

}  // namespace sluice::core
