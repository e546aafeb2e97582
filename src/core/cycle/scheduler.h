// Scheduler: one scheduling cycle over a ClusterState (R-ARCH-1, R-ARCH-2).
//
// RunCycle is a pure function of (state, now, options): it reads the state, never changes
// it, and returns the decisions; Commit() applies them. The same code serves the server,
// the simulator and the estimator (through core/driver/drive_loop.h). Deterministic to the
// byte: queues and jobs are visited in their defined orders, never in hash order.
// docs/design/cycle.md explains the cycle step by step.
// Thread-safety: a Scheduler is immutable after construction; RunCycle may run
// concurrently on different states.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "base/time.h"
#include "core/admission/cycle_context.h"
#include "core/admission/policy.h"
#include "core/alloc/allocator.h"
#include "core/model/cluster_state.h"
#include "core/model/decision.h"

namespace sluice::core {

struct CycleOptions {
  // Emit a PendJob with reasons for every job left pending. Costs time proportional to the
  // pending jobs; decisions are the same either way (tests/property checks it).
  bool explain = false;
};

class Scheduler {
 public:
  Scheduler();
  // With another allocator (the differential test's reference path).
  explicit Scheduler(std::unique_ptr<Allocator> allocator);
  ~Scheduler();

  // One cycle at `now`, in the steps of docs/design/cycle.md (keep the two in step):
  //  1. BeginCycle: the cycle's working set (CycleContext): capacity (copied from the free
  //     slots on first use), named limits with their usage, queue loads, the unsatisfiable
  //     cache.
  //  2. ClassifyNewJobs: every job no cycle has seen is checked for static feasibility
  //     (R-ADM-1) and against policy maximums (queue slot limit and max_capacity, named
  //     limits); an impossible one gets FailJob UNSCHEDULABLE.
  //  3. KeepReservations (preemption.h): a job whose victims have all exited starts ahead of
  //     every queue; one whose victims still run pends PREEMPTING, their hosts withheld.
  //  4. OrderQueues: the order queues are offered capacity (R-Q-1, admission/queue_loads.h).
  //  5. AdmitQueue, for each queue in that order: its AdmissionPolicy admits what it allows,
  //     in queue or fairshare order (R-ADM-2, R-Q-4); an inactive queue admits nothing.
  //  6. Preempt (preemption.h): reclaim deadlines and victims for blocked heads (R-CAP-3,
  //     R-CAP-4).
  //  7. FinishCycle: the clock-only eligibility timers join wake_at; returns the decisions
  //     in the order they were made, the unavailable counts and wake_at.
  // `workspace`: buffers kept from the driver's previous cycle (none: the cycle allocates
  // its own), including the decisions' when the caller recycled its last result
  // (CycleWorkspace::Recycle); the decisions are the same either way.
  CycleResult RunCycle(const ClusterState& state, Instant now, const CycleOptions& options = {},
                       CycleWorkspace* workspace = nullptr) const;

  // Step 2's verdict on one job, outside a cycle (never_runs.cc): why `job` could never run
  // here (static feasibility, R-ADM-1, then policy maximums), or nullopt when it could. For
  // checking a change before it is applied (R-UX-7); `job` need not be in `state`'s table.
  std::optional<std::string> NeverRuns(const Job& job, const ClusterState& state) const;

 private:
  CycleContext BeginCycle(const ClusterState& state, Instant now, const CycleOptions& options,
                          CycleWorkspace& workspace) const;
  void ClassifyNewJobs(CycleContext& ctx) const;
  void AdmitQueue(const Queue& queue, CycleContext& ctx) const;

  std::unique_ptr<Allocator> allocator_;
  std::array<std::unique_ptr<AdmissionPolicy>, 4> policies_;  // by PolicyKind
};

// Applies a cycle's decisions to the state at time `now`: starts jobs, ends failed ones,
// records admission updates, preemptions (MarkPreempted, DropPreemption) and reclaim
// deadlines, adds the cycle's counts to each queue's totals, and marks every job the cycle
// saw as classified. PendJob decisions change nothing.
void Commit(const CycleResult& result, Instant now, ClusterState& state);
// The same, moving each start's allocation into its job instead of copying it: every
// StartJob of `result` is left with an empty allocation (the job's, in `state`, is the one
// to read), the rest of `result` as it was. The resulting state is the same.
void Commit(CycleResult&& result, Instant now, ClusterState& state);

}  // namespace sluice::core
