// Capacity: free slots per host as one scheduling cycle sees them.
//
// Built from the ClusterState at the start of a cycle, then debited by every allocation the
// cycle makes, so later decisions in the same cycle see earlier ones. Hosts that do not
// accept work (closed, unavail, draining) have zero free slots here. Within a cycle capacity
// only shrinks (R-AL-5). Cost: O(hosts) to build, O(hosts of the allocation) per debit.
#pragma once

#include <cstdint>
#include <vector>

#include "base/ids.h"
#include "core/model/cluster_state.h"
#include "core/model/job.h"

namespace sluice::core {

class Capacity {
 public:
  explicit Capacity(const ClusterState& state);

  int32_t FreeSlots(HostIndex host) const { return free_slots_[host]; }
  // Free slots on all hosts that accept work.
  int64_t TotalFree() const { return total_free_; }
  // Hosts that accept work, whatever their free slots.
  int32_t WorkingHosts() const { return working_hosts_; }
  size_t host_count() const { return free_slots_.size(); }

  // REQUIRES: every grant fits the host's free slots.
  void Debit(const Allocation& allocation);
  void Credit(const Allocation& allocation);

 private:
  std::vector<int32_t> free_slots_;
  int64_t total_free_ = 0;
  int32_t working_hosts_ = 0;
};

}  // namespace sluice::core
