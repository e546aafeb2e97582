// Scheduler::NeverRuns (scheduler.h): ClassifyNewJobs' check for one job, uncached.
#include "core/admission/policy_limits.h"
#include "core/alloc/capacity.h"
#include "core/cycle/scheduler.h"

namespace sluice::core {

std::optional<std::string> Scheduler::NeverRuns(const Job& job, const ClusterState& state) const {
  Capacity all_configured = Capacity::AllConfigured(state);
  Feasibility feasibility = allocator_->CheckFeasible(job, state, all_configured);
  if (!feasibility.ok) return std::move(feasibility.why);
  return ExceedsPolicyLimits(job, state);
}

}  // namespace sluice::core
