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

const std::vector<uint64_t>* Capacity::GpuMatchColumn(const ClusterState& state,
                                                     const std::string& model,
                                                     int64_t mem_mb) const {
  if (model.empty() && mem_mb <= 0) return nullptr;
  auto key = std::make_pair(model, mem_mb);
  auto it = gpu_match_columns_.find(key);
  if (it != gpu_match_columns_.end()) return &it->second;
  std::vector<uint64_t> column(state.topology().hosts().size(), 0);
  for (const Host& host : state.topology().hosts()) {
    const HostDevices& devices = host.devices;
    for (uint64_t rest = devices.all; rest != 0; rest &= rest - 1) {
      const auto i = static_cast<size_t>(__builtin_ctzll(rest));
      // A device whose model or memory is not known matches no test of it.
      if (!model.empty() && (i >= devices.model.size() || devices.model[i] != model)) continue;
      if (mem_mb > 0 && (i >= devices.memory_mb.size() || devices.memory_mb[i] < mem_mb)) continue;
      column[host.index] |= uint64_t{1} << i;
    }
  }
  return &gpu_match_columns_.emplace(std::move(key), std::move(column)).first->second;
}

uint64_t Capacity::ShareableGpus(const Host& host, int64_t mem_mb) const {
  const HostIndex h = host.index;
  if (!accepts_work_[h]) return 0;
  const std::vector<int64_t>* claimed = nullptr;
  if (auto it = gpu_mem_claimed_.find(h); it != gpu_mem_claimed_.end()) claimed = &it->second;
  const uint64_t free = FreeGpus(h);
  uint64_t shareable = 0;
  for (uint64_t rest = host.devices.all; rest != 0; rest &= rest - 1) {
    const int i = __builtin_ctzll(rest);
    int64_t reserved = all_configured_ ? 0 : host.GpuMemShared(i);
    if (claimed != nullptr) reserved += (*claimed)[static_cast<size_t>(i)];
    // Neither free nor shared: some job holds (or this cycle claimed) it whole.
    if ((free >> i & 1) == 0 && reserved <= 0) continue;
    if (host.devices.MemoryOf(i) - reserved >= mem_mb) shareable |= uint64_t{1} << i;
  }
  return shareable;
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

void Capacity::IndexGpuBuckets() {
  gpu_buckets_.assign(kMaxGpusPerHost + 1, std::vector<uint64_t>((gpu_free_.size() + 63) / 64, 0));
  gpu_bucket_sizes_.assign(kMaxGpusPerHost + 1, 0);
  for (HostIndex h = 0; h < gpu_free_.size(); ++h) {
    const int c = __builtin_popcountll(gpu_free_[h]);
    gpu_buckets_[c][h / 64] |= uint64_t{1} << (h % 64);
    ++gpu_bucket_sizes_[c];
  }
}

void Capacity::SetFreeGpus(HostIndex h, uint64_t mask) {
  if (!gpu_buckets_.empty()) {
    const int before = __builtin_popcountll(gpu_free_[h]);
    const int after = __builtin_popcountll(mask);
    if (before != after) {
      const uint64_t bit = uint64_t{1} << (h % 64);
      gpu_buckets_[before][h / 64] &= ~bit;
      --gpu_bucket_sizes_[before];
      gpu_buckets_[after][h / 64] |= bit;
      ++gpu_bucket_sizes_[after];
    }
  }
  gpu_free_[h] = mask;
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
  if (slots.any_gpus) {
    gpu_free_.assign(slots.gpu_free.begin(), slots.gpu_free.end());
  } else {
    gpu_free_.clear();
  }
  gpu_buckets_.clear();
  gpu_mem_claimed_.clear();
  all_configured_ = false;
  book_ = nullptr;
  reserved_from_.clear();
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
  gpu_match_columns_.clear();
}

Capacity Capacity::AllConfigured(const ClusterState& state) {
  const Topology& topology = state.topology();
  Capacity capacity;
  capacity.all_configured_ = true;
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
  if (topology.host_slots().any_gpus) {
    for (const Host& host : topology.hosts()) capacity.gpu_free_.push_back(host.devices.all);
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
  if constexpr (kLogged) LogUndo(kUndoHost, grant.host, slots, 0, 0);
  for (const ResourceAmount& r : grant.resources) {
    int64_t& free = free_resources_[grant.host * resource_count_ + r.id];
    SLUICE_CHECK(r.amount <= free);
    free -= r.amount;
    if constexpr (kLogged) LogUndo(kUndoHost, grant.host, 0, r.id, r.amount);
  }
  if (grant.gpus != 0) {
    const uint64_t before = gpu_free_[grant.host];
    if (grant.gpu_mem_mb == 0) {
      SLUICE_CHECK((grant.gpus & ~before) == 0);  // no device granted twice
    } else {
      ClaimGpuMemory<kLogged>(grant.host, grant.gpus, grant.gpu_mem_mb);
    }
    SetFreeGpus(grant.host, before & ~grant.gpus);
    if constexpr (kLogged) {
      LogUndo(kUndoGpus, grant.host, 0, 0, static_cast<int64_t>(before));
    }
  }
}

template <bool kLogged>
void Capacity::ClaimGpuMemory(HostIndex h, uint64_t gpus, int64_t mem_mb) {
  std::vector<int64_t>& claimed = gpu_mem_claimed_[h];
  if (claimed.empty()) claimed.assign(kMaxGpusPerHost, 0);
  for (uint64_t rest = gpus; rest != 0; rest &= rest - 1) {
    const int i = __builtin_ctzll(rest);
    claimed[static_cast<size_t>(i)] += mem_mb;
    if constexpr (kLogged) LogUndo(kUndoGpuMem, h, i, 0, mem_mb);
  }
}

template <bool kLogged>
void Capacity::TakeShared(const ResourceAmount& amount) {
  SLUICE_CHECK(amount.amount <= free_shared_[amount.id]);
  free_shared_[amount.id] -= amount.amount;
  if constexpr (kLogged) LogUndo(kUndoShared, amount.id, 0, 0, amount.amount);
}

void Capacity::ClaimHost(const HostGrant& grant) { TakeHost<true>(grant); }
void Capacity::ClaimShared(const ResourceAmount& amount) { TakeShared<true>(amount); }

void Capacity::Rollback(size_t mark) {
  while (undo_.size() > mark) {
    const Undo& u = undo_.back();
    if (u.kind == kUndoShared) {
      free_shared_[u.index] += u.amount;
    } else if (u.kind == kUndoGpus) {
      SetFreeGpus(u.index, static_cast<uint64_t>(u.amount));
    } else if (u.kind == kUndoGpuMem) {
      // A host whose claims all come back leaves the map: it shares nothing this cycle.
      auto it = gpu_mem_claimed_.find(u.index);
      it->second[static_cast<size_t>(u.slots)] -= u.amount;
      if (std::all_of(it->second.begin(), it->second.end(), [](int64_t m) { return m == 0; })) {
        gpu_mem_claimed_.erase(it);
      }
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

void Capacity::Credit(const Host& host, const HostGrant& grant, int32_t slots_taken,
                      bool now_idle) {
  const HostIndex h = grant.host;
  if (!accepts_work_[h]) return;  // freed, but not usable by new work
  free_slots_[h] += slots_taken;
  total_free_ += slots_taken;
  NoteFree(h);
  for (const ResourceAmount& r : grant.resources)
    free_resources_[h * resource_count_ + r.id] += r.amount;
  if (grant.gpus != 0 && grant.gpu_mem_mb == 0) SetFreeGpus(h, gpu_free_[h] | grant.gpus);
  if (grant.gpus != 0 && grant.gpu_mem_mb > 0) {
    // Its memory comes back; a device it was the last sharer of is wholly free again.
    ClaimGpuMemory<false>(h, grant.gpus, -grant.gpu_mem_mb);
    const std::vector<int64_t>& claimed = gpu_mem_claimed_[h];
    uint64_t now_free = 0;
    for (uint64_t rest = grant.gpus; rest != 0; rest &= rest - 1) {
      const int i = __builtin_ctzll(rest);
      if (host.GpuMemShared(i) + claimed[static_cast<size_t>(i)] == 0) now_free |= uint64_t{1} << i;
    }
    SetFreeGpus(h, gpu_free_[h] | now_free);
  }
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

void Capacity::SetReservations(const ClusterState& state, Instant now) {
  const ReservationBook& book = state.reservations();
  if (book.empty()) {
    book_ = nullptr;
    return;
  }
  book_ = &book;
  reservation_now_ = now;
  reserved_from_.resize(free_slots_.size());
  for (HostIndex h = 0; h < reserved_from_.size(); ++h) {
    reserved_from_[h] = book.ReservedFrom(h, now);
  }
}

ReservationTerms Capacity::TermsOf(const Job& job) const {
  ReservationTerms terms;
  if (book_ == nullptr) return terms;
  if (job.spec.run_limit) terms.end = AddDuration(reservation_now_, *job.spec.run_limit);
  if (job.spec.reservation.empty()) return terms;
  terms.reservation = book_->Find(job.spec.reservation);
  if (terms.reservation < 0) {
    terms.reservation = ReservationTerms::kMissing;
    return terms;
  }
  // A job inside a reservation ends with its window (plus the overrun).
  if (std::optional<ReservationWindow> w = book_->OpenWindow(terms.reservation, reservation_now_)) {
    terms.end = std::min(terms.end,
                         AddDuration(w->end, book_->spec(terms.reservation).overrun));
  }
  return terms;
}

}  // namespace sluice::core
