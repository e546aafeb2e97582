// CycleContext: the working set of one scheduling cycle (core/cycle/scheduler.h's steps):
// capacity (built on first use), this cycle's starts per queue and user, named limits with
// their usage, queue loads, the unsatisfiable cache, the blocked heads and the result being
// built.
// Lives only for the duration of RunCycle. The cycle's phases (classification, preemption;
// core/cycle/) use it whole; admission policies see it only through AdmissionContext
// (admission_context.h). It lives in admission/, below cycle/, because the policies'
// context forwards to it inline (the cycle's inner loop) and cycle/ includes the policies.
// Invariants: capacity only shrinks within a cycle (withheld or debited), so a failed
// nomination is final for the cycle (the unsatisfiable cache relies on it); every start goes
// through Start(), which keeps capacity, limits, loads and the per-queue counts in step.
// Thread-safety: none (one cycle, one thread).
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/admission/cycle_limits.h"
#include "core/admission/queue_loads.h"
#include "core/admission/unsatisfiable_cache.h"
#include "core/alloc/allocator.h"
#include "core/alloc/capacity.h"
#include "core/alloc/host_view.h"
#include "core/model/cluster_state.h"
#include "core/model/decision.h"

namespace sluice::core {

// A job started earlier in this cycle; backfill needs it as a running job.
struct StartedJob {
  const Job* job = nullptr;
  int32_t slots = 0;
};

// Buffers a driver keeps from one cycle to the next (Scheduler::RunCycle), so that a cycle
// does not allocate them again: the capacity's, the queue loads' and the cycle's own
// bookkeeping (CycleContext's members of the same names). Contents never carry over (each
// cycle rebuilds the first two from the state and BeginCycle empties the rest); one
// workspace serves one driver's cycles in turn. The cycle works in them in place
// (CycleContext refers to them): building and freeing them per cycle was ~4 % of a replay.
struct CycleWorkspace {
  // Hands a finished cycle's decisions back (emptied, their capacity kept), for the next
  // cycle's result to be built in. An explained cycle emits about one 72-byte decision per
  // pending job: a vector allocated afresh each cycle took a page fault per 4 KiB touched
  // (~18,000 at a million jobs, issue 45).
  void Recycle(CycleResult&& result) {
    result.decisions.clear();
    if (result.decisions.capacity() > decisions.capacity()) decisions.swap(result.decisions);
  }

  std::vector<Decision> decisions;  // empty; the next result's buffer (Recycle)
  Capacity capacity;
  QueueLoads loads;
  std::vector<StartedJob> started;
  std::vector<JobId> failed;
  std::unordered_set<JobId> started_ids;
  std::vector<int32_t> started_jobs_by_queue;
  std::vector<int64_t> started_slots_by_queue;
  std::unordered_set<JobId> decided_early;
  std::unordered_set<JobId> chosen_victims;
  std::vector<const Job*> blocked_heads;
};

struct CycleContext {
  const ClusterState& state;
  Instant now;
  const Allocator& allocator;
  bool explain;
  // Built on first use (capacity_built_): many cycles (a full cluster) never need per-host
  // capacity. The workspace's, used in place: moving a Capacity in and out of the workspace
  // every cycle was ~3 % of a trace replay.
  Capacity& capacity_;
  bool capacity_built_ = false;
  CycleResult result;
  // The workspace's, emptied by BeginCycle (as are the other references below).
  std::vector<StartedJob>& started;
  std::vector<JobId>& failed;  // sorted: jobs failed by classification this cycle
  UnsatisfiableCache unsatisfiable;
  // `started` by id for StartedThisCycle, filled when a lookup first needs it (most
  // policies never ask, and a hash insert per start was ~3 % of a trace replay).
  std::unordered_set<JobId>& started_ids;       // lookups only, never iterated
  mutable size_t started_ids_filled = 0;        // started[0, filled) are in started_ids
  std::vector<int32_t>& started_jobs_by_queue;  // by QueueIndex, this cycle; empty: no start
  std::vector<int64_t>& started_slots_by_queue;
  CycleLimits limits;  // named limits with this cycle's starts (R-Q-2)
  QueueLoads& loads;   // the workspace's: guarantees, maxima, users (R-Q-1, R-CAP-1, R-CAP-2)
  std::unordered_set<JobId>& decided_early;   // by the preemption phase (preemption.h)
  std::unordered_set<JobId>& chosen_victims;  // preempted by this cycle
  std::vector<const Job*>& blocked_heads;     // by QueueIndex; empty: no blocked head yet
  // Slots started this cycle per (queue, user), kept only for queues with a user limit.
  std::map<std::pair<QueueIndex, std::string>, int64_t> started_user_slots;

  // Jobs this cycle has already decided and policies must skip: failed by classification,
  // or started / kept PREEMPTING by the preemption phase before the queues.
  bool DecidedThisCycle(const Job& job) const {
    if (!decided_early.empty() && decided_early.contains(job.spec.id)) return true;
    return !job.classified && std::binary_search(failed.begin(), failed.end(), job.spec.id);
  }

  // Records the queue's blocked head for the preemption phase (bounded_backfill keeps its
  // own first-blocked bookkeeping and calls only this).
  void NoteBlockedHead(const Job& head) {
    if (blocked_heads.empty()) blocked_heads.assign(state.topology().queues().size(), nullptr);
    if (blocked_heads[head.queue] == nullptr) blocked_heads[head.queue] = &head;
  }
  // The blocked head of each queue this cycle (policies report it through MarkBlockedHead).
  const Job* BlockedHeadOf(QueueIndex queue) const {
    return queue < blocked_heads.size() ? blocked_heads[queue] : nullptr;
  }

  Capacity& capacity() {
    if (!capacity_built_) {
      capacity_.Reset(state);
      capacity_.SetReservations(state, now);
      capacity_built_ = true;
    }
    return capacity_;
  }
  // Free slots on hosts that accept work, as of this point of the cycle.
  int64_t TotalFree() const {
    return capacity_built_ ? capacity_.TotalFree() : state.topology().free_slots();
  }
  // When `job` would end if it started now: now + its run limit, or for a job inside an
  // advance reservation at the latest with its window (+ overrun, R-RSV-2).
  Instant EndIfStartedNow(const Job& job) {
    const Instant end = AddDuration(now, job.spec.run_limit.value_or(kInfinite));
    if (job.spec.reservation.empty() || state.reservations().empty()) return end;
    return std::min(end, capacity().TermsOf(job).end);
  }
  // TotalFree without the hosts advance reservations keep from `job` (R-RSV-2): what a
  // backfill reservation for it may count on now. O(hosts with free slots) with
  // reservations, TotalFree without.
  int64_t FreeFor(const Job& job) {
    if (state.reservations().empty()) return TotalFree();
    const Capacity& c = capacity();
    const ReservationTerms terms = c.TermsOf(job);
    int64_t free = 0;
    c.ForEachHostWithFree([&](HostIndex h) {
      if (c.ReservationAdmits(h, terms)) free += c.FreeSlots(h);
    });
    return free;
  }

  // Nominates through the allocator, counting the attempt. The capacity snapshot
  // shortlists (R-ADM-1): a job needing more slots than are free anywhere cannot fit, and
  // when no explanation is wanted the allocator is not asked. A request that already failed
  // this cycle fails again from the unsatisfiable cache (R-AL-5) with the same reasons.
  // When the cycle explains nothing and has no named limits, a failure's reasons may be
  // empty (Allocator::NominateUnexplained).
  AllocOutcome Nominate(const Job& job) {
    ++result.stats.evaluated;
    if (!explain && job.min_slots > TotalFree()) return AllocOutcome{};
    if (const PendingReasons* cached = unsatisfiable.Find(job)) {
      ++result.stats.cache_hits;
      CountUnavailable(job);
      return AllocOutcome{.ok = false, .allocation = {}, .reasons = *cached};
    }
    ++result.stats.allocator_calls;
    // Without explanations and limits nothing reads a failure's reasons (policies read
    // them only to explain, or for HOST_LIMIT): the allocator may skip counting them.
    AllocOutcome outcome = limits.any() ? NominateWithinLimits(job)
                           : explain    ? allocator.Nominate(job, state, capacity())
                                        : allocator.NominateUnexplained(job, state, capacity());
    // Capacity only shrinks and usage only grows within a cycle, so a failure is final for
    // this cycle and may be cached (the key includes user, queue and project).
    if (!outcome.ok) unsatisfiable.Insert(job, outcome.reasons);
    if (!outcome.ok) CountUnavailable(job);
    return outcome;
  }

  // Nominates with host-scoped limits applied (cycle_limits.h). A job that would fit but for
  // a per-host limit gets HOST_LIMIT as its main reason: policies skip it like any limit.
  AllocOutcome NominateWithinLimits(const Job& job) {
    Capacity& cap = capacity();
    const size_t mark = cap.Mark();
    std::vector<ReasonDetail> masked = limits.MaskHosts(job, cap, /*whole_groups=*/false);
    AllocOutcome outcome = allocator.Nominate(job, state, cap);
    if (outcome.ok && !limits.FitsHostGroups(job, outcome.allocation)) {
      cap.Rollback(mark);
      masked = limits.MaskHosts(job, cap, /*whole_groups=*/true);
      outcome = allocator.Nominate(job, state, cap);
    }
    cap.Rollback(mark);
    if (outcome.ok || masked.empty()) return outcome;
    if (allocator.Nominate(job, state, cap).ok) outcome.reasons = PendingReasons{};
    for (ReasonDetail& detail : masked) outcome.reasons.Add(std::move(detail));
    return outcome;
  }

  bool StartedThisCycle(const Job& job) const {
    if (started.size() <= kStartedScanned) {
      return std::any_of(started.begin(), started.end(),
                         [&](const StartedJob& s) { return s.job->spec.id == job.spec.id; });
    }
    for (; started_ids_filled < started.size(); ++started_ids_filled) {
      started_ids.insert(started[started_ids_filled].job->spec.id);
    }
    return started_ids.contains(job.spec.id);
  }
  // Up to this many starts, StartedThisCycle reads `started` directly.
  static constexpr size_t kStartedScanned = 16;
  // Jobs and slots a queue runs, counting this cycle's starts.
  int64_t QueueRunning(const Queue& queue) const {
    return queue.running_jobs +
           (started_jobs_by_queue.empty() ? 0 : started_jobs_by_queue[queue.index]);
  }
  // Slots a user runs in a queue with a user limit, counting this cycle's starts.
  int64_t UserSlots(const Queue& queue, const std::string& user) const {
    const QueueLoad& load = loads.of(queue.index);
    auto running = load.user_slots.find(user);
    auto started_now = started_user_slots.find({queue.index, user});
    return (running == load.user_slots.end() ? 0 : running->second) +
           (started_now == started_user_slots.end() ? 0 : started_now->second);
  }
  int64_t QueueSlots(const Queue& queue) const {
    return queue.used_slots +
           (started_slots_by_queue.empty() ? 0 : started_slots_by_queue[queue.index]);
  }

  void CountUnavailable(const Job& job) {
    if (result.unavailable_by_queue.empty())
      result.unavailable_by_queue.assign(state.topology().queues().size(), 0);
    ++result.unavailable_by_queue[job.queue];
  }

  // Asks for a cycle at `t` (a timer: aging deadline, begin time, ...).
  void WakeAt(Instant t) {
    if (t > now && (!result.wake_at || t < *result.wake_at)) result.wake_at = t;
  }

  // The first cycle in which a job is head and temporarily unavailable sets its
  // first-blocked time (R-ADM-2), whatever the policy.
  void MarkBlockedHead(const Job& head) {
    NoteBlockedHead(head);
    if (head.admission.first_blocked) return;
    result.decisions.push_back(
        UpdateAdmission{head.spec.id, head.admission.bypass_count, now, head.admission.gate_since});
  }

  // A gated head's hosts (R-ADM-2): every host of its queue that some part of its request
  // could select is withheld from the queues after it in this cycle.
  void WithholdHostsOf(const Job& head, Instant gate_since) {
    Capacity& cap = capacity();
    const Queue& queue = state.topology().queues()[head.queue];
    CapacityHostView view(state, cap);
    auto consider = [&](HostIndex h) {
      view.Bind(h);
      for (const resreq::Compound& alternative : head.request->alternatives) {
        for (const resreq::Primary& part : alternative.parts) {
          if (state.requests().PassesSelect(part.select, h, view)) {
            cap.Withhold(h, head.spec.id, gate_since);
            return;
          }
        }
      }
    };
    state.topology().ForEachHostOf(queue, consider);
  }

  // Records a start: debits capacity and appends the decision.
  void Start(const Job& job, Allocation allocation, bool backfilled) {
    if (started_jobs_by_queue.empty()) {
      started_jobs_by_queue.assign(state.topology().queues().size(), 0);
      started_slots_by_queue.assign(state.topology().queues().size(), 0);
    }
    ++started_jobs_by_queue[job.queue];
    started_slots_by_queue[job.queue] += allocation.TotalSlots();
    if (state.topology().queues()[job.queue].spec.user_limit_pct > 0) {
      started_user_slots[{job.queue, job.spec.user}] += allocation.TotalSlots();
      loads.Started(job.queue, job.spec.user);
    }
    capacity().Debit(allocation);
    limits.Charge(job, allocation);
    started.push_back(StartedJob{&job, allocation.TotalSlots()});
    ++result.stats.started;
    if (backfilled) ++result.stats.backfilled;
    result.decisions.push_back(StartJob{job.spec.id, std::move(allocation), backfilled});
  }

  void Pend(const Job& job, PendingReasons reasons) {
    result.decisions.push_back(PendJob{job.spec.id, std::move(reasons)});
  }
};

}  // namespace sluice::core
