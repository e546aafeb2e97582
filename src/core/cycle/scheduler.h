// Scheduler: one scheduling cycle over a ClusterState (R-ARCH-1, R-ARCH-2).
//
// RunCycle is a pure function of (state, now, options): it reads the state, never changes
// it, and returns the decisions; Commit() applies them. The same code serves the server
// and the simulator. Deterministic to the byte: queues and jobs are visited in their
// defined orders, never in hash order. docs/design/cycle.md explains the cycle.
#pragma once

#include <array>
#include <memory>

#include "base/status.h"
#include "base/time.h"
#include "core/admission/policy.h"
#include "core/alloc/allocator.h"
#include "core/cycle/decision.h"
#include "core/model/cluster_state.h"

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

  // Whether every queue of `config` uses a policy this build implements.
  static Status CheckSupported(const ClusterConfig& config);

  // Steps:
  //  1. Build the cycle's Capacity from the state's free slots.
  //  2. ClassifyNewJobs: every job no cycle has seen is checked for static feasibility
  //     (R-ADM-1) and against policy maximums (queue slot limit and max_capacity, named
  //     limits); an impossible one gets FailJob UNSCHEDULABLE.
  //  3. OrderQueues: queue priority descending, then name (R-Q-1).
  //  4. Each queue's AdmissionPolicy admits what it allows, in queue order (R-ADM-2).
  //  5. Returns the decisions and the next wake-up time (none needed by fifo/easy).
  CycleResult RunCycle(const ClusterState& state, Instant now,
                       const CycleOptions& options = {}) const;

 private:
  void ClassifyNewJobs(CycleContext& ctx) const;

  std::unique_ptr<Allocator> allocator_;
  std::array<std::unique_ptr<AdmissionPolicy>, 4> policies_;  // by PolicyKind
};

// Applies a cycle's decisions to the state at time `now`: starts jobs, ends failed ones, and
// marks every job the cycle saw as classified. PendJob decisions change nothing.
void Commit(const CycleResult& result, Instant now, ClusterState& state);

}  // namespace sluice::core
