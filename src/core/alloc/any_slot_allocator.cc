#include "core/alloc/any_slot_allocator.h"

#include <algorithm>
#include <string>

namespace sluice::core {

AllocOutcome AnySlotAllocator::Nominate(const Job& job, const ClusterState& /*state*/,
                                        const Capacity& capacity, AllocMode /*mode*/) const {
  AllocOutcome outcome;
  const int64_t free = capacity.TotalFree();
  if (free < job.spec.min_tasks) {
    outcome.reasons.Add(ReasonDetail{.code = ReasonCode::kNoResource,
                                     .resource = "slots",
                                     .needed = job.spec.min_tasks,
                                     .available = free,
                                     .hosts = capacity.WorkingHosts()});
    return outcome;
  }
  int32_t wanted = static_cast<int32_t>(std::min<int64_t>(job.spec.max_tasks, free));
  for (HostIndex h = 0; wanted > 0 && h < capacity.host_count(); ++h) {
    const int32_t take = std::min(wanted, capacity.FreeSlots(h));
    if (take <= 0) continue;
    outcome.allocation.hosts.push_back(HostGrant{h, take});
    wanted -= take;
  }
  SLUICE_CHECK(wanted == 0);
  outcome.ok = true;
  return outcome;
}

Feasibility AnySlotAllocator::CheckFeasible(const Job& job, const ClusterState& state) const {
  if (job.spec.min_tasks <= state.total_slots()) return {};
  return Feasibility{
      .ok = false,
      .why = "asks " + std::to_string(job.spec.min_tasks) + " slots; the cluster has " +
             std::to_string(state.total_slots()) + " in total"};
}

}  // namespace sluice::core
