// DriveLoop: the one loop that drives the scheduling core (R-ARCH-1, R-SIM-1b, R-SIM-1d).
//
// Every driver does the same thing between the outside world and the core:
//   1. apply the inputs due at time t (submissions, finishes, cancels, ...) as core events;
//   2. run one cycle at t (Scheduler::RunCycle);
//   3. Commit it to the state;
//   4. hand each decision, in cycle order, to the driver's DecisionHandler;
//   5. remember the next wake-up the core asked for, and go to the next time.
// This file owns steps 2-5 and the choice of the next time; the driver owns step 1 and what
// it does with each decision. The simulator (sim/simulator.cc), the start-time estimator
// (core/driver/forecast.cc, on a Clone of the state) and the controller's cycle runner
// (server/cycle_runner.cc) are its three handlers. tests/testing/reference_sim.cc stays an
// independent loop on purpose: it is the differential test's oracle.
//
// Pure: no I/O, no clock; time is the `now` each call is given.
// Thread-safety: none; the owner serialises calls (the controller holds its lock).
#pragma once

#include <optional>
#include <span>

#include "base/status.h"
#include "base/time.h"
#include "core/cycle/scheduler.h"
#include "core/model/cluster_state.h"
#include "core/model/decision.h"

namespace sluice::core {

// What a driver does with each decision of a committed cycle. Called once per decision, in
// the order the cycle made them, after Commit (the state already shows starts and fails).
// A StartJob's allocation has moved into its job (Commit(CycleResult&&)): read the job's,
// state.FindJob(start.job)->allocation; the StartJob's is empty.
// Defaults ignore the decision; a handler overrides what it acts on.
class DecisionHandler {
 public:
  virtual ~DecisionHandler() = default;
  virtual void OnStart(const StartJob& /*start*/, Instant /*now*/) {}
  virtual void OnFail(const FailJob& /*fail*/, Instant /*now*/) {}
  // Non-const: a handler may keep the reasons by moving them out.
  virtual void OnPend(PendJob& /*pend*/, Instant /*now*/) {}
  virtual void OnPreempt(const PreemptJob& /*preempt*/, Instant /*now*/) {}
  virtual void OnDropPreemption(const DropPreemption& /*drop*/, Instant /*now*/) {}
  virtual void OnReclaim(const UpdateReclaim& /*reclaim*/, Instant /*now*/) {}
  virtual void OnUpdate(const UpdateAdmission& /*update*/, Instant /*now*/) {}
};

class DriveLoop {
 public:
  // Borrows both; they must outlive the loop.
  DriveLoop(const Scheduler& scheduler, ClusterState& state);

  // Steps 2-5 at `now`: RunCycle, Commit, every decision to `handler` in order, then the
  // core's wake-up (a wake at or before `now` is dropped: the cycle just ran). Returns the
  // cycle's result with its decisions already handed out (stats, unavailable counts); its
  // starts' allocations are in their jobs (see DecisionHandler). The result is the loop's,
  // valid until the next Cycle, which builds its own in the same buffers.
  // REQUIRES: `now` is no earlier than the previous cycle's time.
  const CycleResult& Cycle(Instant now, const CycleOptions& options, DecisionHandler& handler);

  // The driver asks for a cycle at `t` without an input (e.g. at the same time, after
  // preemption victims went back to their queues). Keeps the earlier of the pending wakes.
  void WakeAt(Instant t);

  // The earliest time something is due: `next_input` (the driver's next input, kInfinite
  // when none) or the pending wake-up. kInfinite when neither.
  Instant NextTime(Instant next_input) const;

  // Drops a wake-up that is due at or before `t`; call when a turn at `t` begins.
  void ClearDueWake(Instant t);

  // Preemption victims that honour SIGTERM at once (the simulator and the estimator, whose
  // jobs have no agent to wait for; R-SIM-1d): each goes back to its queue at its original
  // position (JobRequeued at `now`, in the given order), and, when there is any, the loop
  // wakes at `now` for the cycle in which the jobs they were preempted for start. Errors:
  // those of Apply (a victim no longer running), after the victims before it were requeued.
  Status RequeueAtOnce(std::span<const PreemptJob> preempted, Instant now);

  std::optional<Instant> wake_at() const { return wake_at_; }

  // Gives back the last cycle's result and the buffers kept for the next cycle, which
  // allocates its own: for a driver that rests after a large explained cycle (the controller,
  // issue 45: ~72 bytes a waiting job). Invalidates the result Cycle returned; keeps the wake.
  void ReleaseBuffers();

 private:
  const Scheduler& scheduler_;
  ClusterState& state_;
  std::optional<Instant> wake_at_;
  CycleWorkspace workspace_;  // the cycles' buffers, reused from one cycle to the next
  CycleResult last_;          // the last cycle's, recycled into workspace_ by the next
};

// Hands one decision to the matching method of `handler`: the single place that branches
// on the Decision variant for drivers.
void Dispatch(Decision& decision, Instant now, DecisionHandler& handler);

}  // namespace sluice::core
