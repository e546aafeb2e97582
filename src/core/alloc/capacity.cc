#include "core/alloc/capacity.h"

#include <algorithm>

namespace sluice::core {

void Capacity::FillDefines(const ClusterState& state) const {
  const Topology& topology = state.topology();
  defines_.assign(topology.hosts().size() * resource_count_, 0);
  for (const Host& host : topology.hosts()) {
    for (const auto& [name, amount] : host.spec.resources) {
      if (auto id = topology.FindHostResource(name))
        defines_[host.index * resource_count_ + *id] = 1;
    }
  }
}

const std::vector<const std::string*>& Capacity::AttributeColumn(const ClusterState& state,
                                                                 std::string_view name) const {
  auto it = attribute_columns_.find(name);
  if (it != attribute_columns_.end()) return it->second;
  std::vector<const std::string*> column(state.topology().hosts().size(), nullptr);
  const std::string key(name);
  for (const Host& host : state.topology().hosts()) {
    auto found = host.spec.attributes.find(key);
    if (found != host.spec.attributes.end()) column[host.index] = &found->second;
  }
  return attribute_columns_.emplace(key, std::move(column)).first->second;
}

void Capacity::IndexFreeHosts() {
  // Total free slots and the index of hosts with a free slot, in one pass.
  total_free_ = 0;
  has_free_.assign((free_slots_.size() + 63) / 64, 0);
  for (HostIndex h = 0; h < free_slots_.size(); ++h) {
    total_free_ += free_slots_[h];
    has_free_[h / 64] |= static_cast<uint64_t>(free_slots_[h] > 0) << (h % 64);
  }
}

void Capacity::Reset(const ClusterState& state) {
  // Every cycle that needs per-host capacity: copies of the state's dense per-host slots and
  // of its free-host index into buffers kept from the last cycle, not a walk over the hosts.
  const Topology& topology = state.topology();
  const HostSlots& slots = topology.host_slots();
  free_slots_.assign(slots.free.begin(), slots.free.end());
  // Configured slots change only with the configuration: most cycles find them as the last
  // cycle left them (the same version) and keep MaxHostSlots (a max over every host was ~4 %
  // of a replay, and comparing the totals ~1.5 %).
  if (slots.totals_version != totals_version_ || total_slots_.size() != slots.total.size()) {
    total_slots_.assign(slots.total.begin(), slots.total.end());
    totals_version_ = slots.totals_version;
    max_host_slots_ = -1;
  }
  accepts_work_.assign(slots.accepts_work.begin(), slots.accepts_work.end());
  idle_.assign(slots.idle.begin(), slots.idle.end());
  has_free_.assign(slots.has_free.begin(), slots.has_free.end());
  total_free_ = slots.total_free;
  first_free_ = 0;
  resource_count_ = topology.host_resources().size();
  free_resources_.clear();
  if (resource_count_ > 0) {
    free_resources_.assign(topology.hosts().size() * resource_count_, 0);
    for (const Host& host : topology.hosts()) {
      if (!host.AcceptsWork()) continue;
      for (ResourceId r = 0; r < resource_count_; ++r) {
        free_resources_[host.index * resource_count_ + r] = host.ResourceFree(r);
      }
    }
  }
  free_shared_.clear();
  for (ResourceId r = 0; r < topology.shared_resources().size(); ++r) {
    free_shared_.push_back(topology.SharedTotal(r) - topology.SharedUsed(r));
  }
  withheld_for_.clear();
  withheld_since_ = 0;
  select_cursors_.clear();
  undo_.clear();
  defines_.clear();
  attribute_columns_.clear();
}

Capacity Capacity::AllConfigured(const ClusterState& state) {
  const Topology& topology = state.topology();
  Capacity capacity;
  capacity.resource_count_ = topology.host_resources().size();
  capacity.free_resources_.assign(topology.hosts().size() * capacity.resource_count_, 0);
  for (const Host& host : topology.hosts()) {
    capacity.free_slots_.push_back(host.spec.slots);
    capacity.total_slots_.push_back(host.spec.slots);
    capacity.accepts_work_.push_back(true);
    capacity.idle_.push_back(true);
    for (ResourceId r = 0; r < capacity.resource_count_; ++r) {
      capacity.free_resources_[host.index * capacity.resource_count_ + r] = host.ResourceTotal(r);
    }
  }
  for (ResourceId r = 0; r < topology.shared_resources().size(); ++r) {
    capacity.free_shared_.push_back(topology.SharedTotal(r));
  }
  capacity.IndexFreeHosts();
  return capacity;
}

template <bool kLogged>
void Capacity::TakeHost(const HostGrant& grant) {
  const int32_t slots = grant.whole_host ? free_slots_[grant.host] : grant.slots;
  SLUICE_CHECK(slots <= free_slots_[grant.host]);
  free_slots_[grant.host] -= slots;
  total_free_ -= slots;
  NoteFree(grant.host);
  if constexpr (kLogged) LogUndo(false, grant.host, slots, 0, 0);
  for (const ResourceAmount& r : grant.resources) {
    int64_t& free = free_resources_[grant.host * resource_count_ + r.id];
    SLUICE_CHECK(r.amount <= free);
    free -= r.amount;
    if constexpr (kLogged) LogUndo(false, grant.host, 0, r.id, r.amount);
  }
}

template <bool kLogged>
void Capacity::TakeShared(const ResourceAmount& amount) {
  SLUICE_CHECK(amount.amount <= free_shared_[amount.id]);
  free_shared_[amount.id] -= amount.amount;
  if constexpr (kLogged) LogUndo(true, amount.id, 0, 0, amount.amount);
}

void Capacity::ClaimHost(const HostGrant& grant) { TakeHost<true>(grant); }
void Capacity::ClaimShared(const ResourceAmount& amount) { TakeShared<true>(amount); }

void Capacity::Rollback(size_t mark) {
  while (undo_.size() > mark) {
    const Undo& u = undo_.back();
    if (u.shared) {
      free_shared_[u.index] += u.amount;
    } else if (u.amount != 0) {
      free_resources_[u.index * resource_count_ + u.resource] += u.amount;
    } else {
      free_slots_[u.index] += u.slots;
      total_free_ += u.slots;
      NoteFree(u.index);
      first_free_ = std::min<HostIndex>(first_free_, u.index);
      for (auto& [select, cursor] : select_cursors_) cursor = std::min<HostIndex>(cursor, u.index);
    }
    undo_.pop_back();
  }
}

void Capacity::Credit(const HostGrant& grant, int32_t slots_taken, bool now_idle) {
  const HostIndex h = grant.host;
  if (!accepts_work_[h]) return;  // freed, but not usable by new work
  free_slots_[h] += slots_taken;
  total_free_ += slots_taken;
  NoteFree(h);
  for (const ResourceAmount& r : grant.resources)
    free_resources_[h * resource_count_ + r.id] += r.amount;
  if (now_idle) idle_[h] = 1;
  first_free_ = std::min<HostIndex>(first_free_, h);
  for (auto& [select, cursor] : select_cursors_) cursor = std::min<HostIndex>(cursor, h);
}

void Capacity::Debit(const Allocation& allocation) {
  // Committed: nothing to roll back to, so the claims are not logged.
  for (const HostGrant& grant : allocation.hosts) TakeHost<false>(grant);
  for (const ResourceAmount& amount : allocation.shared) TakeShared<false>(amount);
  undo_.clear();
}

}  // namespace sluice::core
