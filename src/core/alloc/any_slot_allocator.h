// AnySlotAllocator: the first allocator — N tasks on any free slots, all or nothing.
//
// Hosts are taken in host-index order (the configuration's order), each giving as many free
// slots as the job still needs. With a task range it grants the largest count in
// [min_tasks, max_tasks] that the free slots allow (R-RR-6). Ignores the resource request
// string; the resreq allocator replaces it. Cost: O(hosts) per successful nomination, O(1)
// per failure (total free slots are kept by Capacity).
#pragma once

#include "core/alloc/allocator.h"

namespace sluice::core {

class AnySlotAllocator final : public Allocator {
 public:
  AllocOutcome Nominate(const Job& job, const ClusterState& state, const Capacity& capacity,
                        AllocMode mode) const override;
  Feasibility CheckFeasible(const Job& job, const ClusterState& state) const override;
};

}  // namespace sluice::core
