// AllocatePrimary: one primary request's plan and host search (see resreq_allocator.h).
//
// Internal to core/alloc. Claims the chosen hosts (and the primary's shared resources) in
// the Capacity and appends their grants; on failure it leaves the Capacity as it found it
// and appends the reasons.
#pragma once

#include <algorithm>
#include <vector>

#include "core/alloc/capacity.h"
#include "core/alloc/host_view.h"
#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"
#include "core/resreq/request.h"

namespace sluice::core {

struct PrimaryTask {
  const ClusterState& state;
  const Queue& queue;
  const resreq::Primary& primary;
  int32_t min_tasks = 1;
  int32_t max_tasks = 1;
  bool exclusive = false;
  // Hosts this attempt must not use (compound search); null or empty: none.
  const std::vector<HostIndex>* banned = nullptr;
  // Placements to pass over before taking one (compound search): 0 takes the first.
  int32_t skip = 0;
  bool Banned(HostIndex host) const {
    return banned != nullptr && std::find(banned->begin(), banned->end(), host) != banned->end();
  }
};

// What the primaries of one attempt have claimed so far.
struct Placement {
  std::vector<HostGrant> grants;
  std::vector<ResourceAmount> shared;
};

bool AllocatePrimary(const PrimaryTask& task, Capacity& capacity, Placement& placement,
                     PendingReasons& reasons);

}  // namespace sluice::core
