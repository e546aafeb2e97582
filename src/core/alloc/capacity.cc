#include "core/alloc/capacity.h"

namespace sluice::core {

Capacity::Capacity(const ClusterState& state) {
  free_slots_.reserve(state.hosts().size());
  for (const Host& host : state.hosts()) {
    const int32_t free = host.AcceptsWork() ? host.FreeSlots() : 0;
    free_slots_.push_back(free);
    total_free_ += free;
    if (host.AcceptsWork()) ++working_hosts_;
  }
}

void Capacity::Debit(const Allocation& allocation) {
  for (const HostGrant& grant : allocation.hosts) {
    SLUICE_CHECK(grant.slots <= free_slots_[grant.host]);
    free_slots_[grant.host] -= grant.slots;
    total_free_ -= grant.slots;
  }
}

void Capacity::Credit(const Allocation& allocation) {
  for (const HostGrant& grant : allocation.hosts) {
    free_slots_[grant.host] += grant.slots;
    total_free_ += grant.slots;
  }
}

}  // namespace sluice::core
