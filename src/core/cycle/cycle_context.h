// CycleContext: the working set of one scheduling cycle, shared by its phases and the
// admission policies. Lives only for the duration of RunCycle.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "core/alloc/allocator.h"
#include "core/alloc/capacity.h"
#include "core/cycle/decision.h"
#include "core/model/cluster_state.h"

namespace sluice::core {

// A job started earlier in this cycle; backfill needs it as a running job.
struct StartedThisCycle {
  const Job* job = nullptr;
  int32_t slots = 0;
};

struct CycleContext {
  const ClusterState& state;
  Instant now;
  const Allocator& allocator;
  bool explain;
  // Built on first use: many cycles (a full cluster) never need per-host capacity.
  std::optional<Capacity> capacity_;
  CycleResult result;
  std::vector<StartedThisCycle> started;
  std::vector<JobId> failed;  // sorted: jobs failed by classification this cycle

  bool FailedThisCycle(const Job& job) const {
    return !job.classified && std::binary_search(failed.begin(), failed.end(), job.spec.id);
  }

  Capacity& capacity() {
    if (!capacity_) capacity_.emplace(state);
    return *capacity_;
  }
  // Free slots on hosts that accept work, as of this point of the cycle.
  int64_t TotalFree() const { return capacity_ ? capacity_->TotalFree() : state.free_slots(); }

  // Nominates through the allocator, counting the attempt. The capacity snapshot
  // shortlists (R-ADM-1): a job needing more slots than are free anywhere cannot fit, and
  // when no explanation is wanted the allocator is not asked.
  AllocOutcome Nominate(const Job& job) {
    ++result.stats.evaluated;
    if (!explain && job.min_slots > TotalFree()) return AllocOutcome{};
    return allocator.Nominate(job, state, capacity(), AllocMode::kNormal);
  }

  // Records a start: debits capacity and appends the decision.
  void Start(const Job& job, Allocation allocation, bool backfilled) {
    capacity().Debit(allocation);
    started.push_back(StartedThisCycle{&job, allocation.TotalSlots()});
    ++result.stats.started;
    if (backfilled) ++result.stats.backfilled;
    result.decisions.push_back(StartJob{job.spec.id, std::move(allocation), backfilled});
  }

  void Pend(const Job& job, PendingReasons reasons) {
    result.decisions.push_back(PendJob{job.spec.id, std::move(reasons)});
  }
};

}  // namespace sluice::core
