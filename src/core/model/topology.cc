#include "core/model/topology.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <set>
#include <utility>

namespace sluice::core {
namespace {

using FindHostFn = std::function<std::optional<HostIndex>(const std::string&)>;

// The hosts `spec` may use: its host group's hosts found with `find`, sorted and unique, or
// every host when it names no group.
Status ResolveQueueHosts(const QueueSpec& spec, const HostGroups& host_groups,
                         const FindHostFn& find, Topology::QueueLayout& layout) {
  layout.hosts.clear();
  layout.all_hosts = spec.host_group.empty();
  if (layout.all_hosts) return Status::Ok();
  auto group = host_groups.find(spec.host_group);
  if (group == host_groups.end()) {
    return NotFound("queue '" + spec.name + "': no host group named '" + spec.host_group + "'");
  }
  for (const std::string& name : group->second) {
    auto host = find(name);
    if (!host) {
      return NotFound("host group '" + group->first + "': no host named '" + name + "'");
    }
    layout.hosts.push_back(*host);
  }
  std::sort(layout.hosts.begin(), layout.hosts.end());
  layout.hosts.erase(std::unique(layout.hosts.begin(), layout.hosts.end()), layout.hosts.end());
  return Status::Ok();
}

Result<DispatchWindows> ParseWindows(const QueueSpec& spec) {
  Result<DispatchWindows> windows = DispatchWindows::Parse(spec.windows);
  if (!windows) return windows.error().WithPrefix("queue '" + spec.name + "': windows");
  return windows;
}

// The next HostSlots::totals_version: process-wide (see there); atomic only so that states
// of different threads (tests, a server's copies) never draw the same number.
uint64_t NextTotalsVersion() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Host h's free slots, the free total and h's bit in the free-host index.
void SetFreeSlots(HostSlots& slots, size_t h, int32_t free) {
  slots.total_free += free - slots.free[h];
  slots.free[h] = free;
  const uint64_t bit = uint64_t{1} << (h % 64);
  if (free > 0) {
    slots.has_free[h / 64] |= bit;
  } else {
    slots.has_free[h / 64] &= ~bit;
  }
}

// SyncHostSlots after a change of a host's use alone (Occupy, Vacate: a trace replay's every
// start and finish, on every host of the job): its index, slots and state are as they were,
// so its column entries for total and accepts_work are already right; only its free slots
// and idleness move.
void SyncHostUse(HostSlots& slots, const Host& host) {
  const size_t h = host.index;
  if (!slots.accepts_work[h]) return;  // free 0 and not idle, whatever it runs
  SetFreeSlots(slots, h, host.FreeSlots());
  slots.idle[h] = host.running_jobs == 0;
  slots.gpu_free[h] = host.GpusFree();
}

// A grant's devices become held: whole (no other holder), or shared up to each device's
// memory (no whole holder).
void HoldGpus(Host& host, const HostGrant& grant) {
  if (grant.gpus == 0) return;
  SLUICE_CHECK(host.CanHoldGpus(grant));
  if (grant.gpu_mem_mb == 0) {
    host.gpus_used |= grant.gpus;
    return;
  }
  if (host.gpu_mem_shared.size() < kMaxGpusPerHost) host.gpu_mem_shared.resize(kMaxGpusPerHost, 0);
  for (uint64_t rest = grant.gpus; rest != 0; rest &= rest - 1) {
    host.gpu_mem_shared[static_cast<size_t>(__builtin_ctzll(rest))] += grant.gpu_mem_mb;
  }
  host.gpus_shared |= grant.gpus;
}

void ReleaseGpus(Host& host, const HostGrant& grant) {
  if (grant.gpu_mem_mb == 0) {
    host.gpus_used &= ~grant.gpus;
    return;
  }
  for (uint64_t rest = grant.gpus; rest != 0; rest &= rest - 1) {
    const int i = __builtin_ctzll(rest);
    int64_t& reserved = host.gpu_mem_shared[static_cast<size_t>(i)];
    reserved -= grant.gpu_mem_mb;
    SLUICE_CHECK(reserved >= 0);
    if (reserved == 0) host.gpus_shared &= ~(uint64_t{1} << i);
  }
}

}  // namespace

bool Host::CanHoldGpus(const HostGrant& grant) const {
  if (grant.gpu_mem_mb == 0) return (grant.gpus & ~GpusFree()) == 0;
  if (grant.gpu_mem_mb < 0 || (grant.gpus & ~(devices.all & ~gpus_used)) != 0) return false;
  for (uint64_t rest = grant.gpus; rest != 0; rest &= rest - 1) {
    const int i = __builtin_ctzll(rest);
    if (GpuMemShared(i) + grant.gpu_mem_mb > devices.MemoryOf(i)) return false;
  }
  return true;
}

std::optional<HostIndex> Topology::FindHost(std::string_view name) const {
  auto it = host_by_name_.find(std::string(name));
  if (it == host_by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<QueueIndex> Topology::FindQueue(std::string_view name) const {
  auto it = queue_by_name_.find(std::string(name));
  if (it == queue_by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<ResourceId> Topology::FindHostResource(std::string_view name) const {
  for (ResourceId id = 0; id < host_resources_.size(); ++id) {
    if (host_resources_[id] == name) return id;
  }
  return std::nullopt;
}

std::optional<ResourceId> Topology::FindSharedResource(std::string_view name) const {
  for (ResourceId id = 0; id < shared_resources_.size(); ++id) {
    if (shared_resources_[id] == name) return id;
  }
  return std::nullopt;
}

std::vector<std::string> Topology::HostNames() const {
  std::vector<std::string> names;
  names.reserve(hosts_.size());
  for (const Host& host : hosts_) names.push_back(host.spec.name);
  return names;
}

Status Topology::CheckNewHost(const HostSpec& spec) {
  if (spec.slots < 0) {
    return InvalidArgument("host '" + spec.name + "': slots must be >= 0");
  }
  for (const auto& [name, amount] : spec.resources) {
    if (amount < 0) {
      return InvalidArgument("host '" + spec.name + "': resource " + name + " must be >= 0");
    }
  }
  auto gpus = spec.resources.find("gpu");
  if (gpus != spec.resources.end() && gpus->second > kMaxGpusPerHost) {
    return InvalidArgument("host '" + spec.name + "': resource gpu must be <= " +
                           std::to_string(kMaxGpusPerHost) + " (devices are numbered 0-" +
                           std::to_string(kMaxGpusPerHost - 1) + ")");
  }
  uint64_t seen = 0;
  for (const GpuDevice& gpu : spec.gpus) {
    if (gpu.index < 0 || gpu.index >= kMaxGpusPerHost) {
      return InvalidArgument("host '" + spec.name + "': GPU index " + std::to_string(gpu.index) +
                             " must be 0-" + std::to_string(kMaxGpusPerHost - 1));
    }
    const uint64_t bit = uint64_t{1} << gpu.index;
    if ((seen & bit) != 0) {
      return InvalidArgument("host '" + spec.name + "': GPU index " + std::to_string(gpu.index) +
                             " is listed twice");
    }
    seen |= bit;
  }
  return Status::Ok();
}

Status Topology::AddHost(HostSpec spec) {
  const std::optional<HostIndex> known = FindHost(spec.name);
  const bool gone = known && hosts_[*known].membership == HostMembership::kGone;
  // A bad slot count is reported before a duplicate name, a bad resource after it.
  if (spec.slots >= 0 && known && !gone) {
    return Status(StatusCode::kAlreadyExists, "host '" + spec.name + "' is defined twice");
  }
  SLUICE_RETURN_IF_ERROR(CheckNewHost(spec));
  if (gone) {  // back under its old index (indices never change)
    hosts_[*known].membership = HostMembership::kListed;
    UpdateHost(hosts_[*known], std::move(spec));
  } else {
    AppendHost(std::move(spec));
  }
  return Status::Ok();
}

void Topology::AppendHost(HostSpec spec) {
  Host host;
  host.index = static_cast<HostIndex>(hosts_.size());
  host_by_name_.emplace(spec.name, host.index);
  SetHostSpec(host, std::move(spec));
  total_slots_ += host.spec.slots;
  if (host.AcceptsWork()) free_slots_ += host.spec.slots;
  hosts_.push_back(std::move(host));
  SyncHostSlots(hosts_.back());
}

void Topology::UpdateHost(Host& host, HostSpec spec) {
  if (host.AcceptsWork()) free_slots_ -= host.FreeSlots();
  total_slots_ += spec.slots - host.spec.slots;
  SetHostSpec(host, std::move(spec));
  if (host.AcceptsWork()) free_slots_ += host.FreeSlots();
  SyncHostSlots(host);
}

void Topology::SetHostSpec(Host& host, HostSpec spec) {
  // A device list is the GPU count: `gpu` always counts the devices that can be granted.
  if (!spec.gpus.empty()) spec.resources["gpu"] = static_cast<int64_t>(spec.gpus.size());
  host.spec = std::move(spec);
  auto gpus = host.spec.resources.find("gpu");
  host.devices = CompileDevices(host.spec, gpus == host.spec.resources.end() ? 0 : gpus->second);
  host.resource_total.assign(host_resources_.size(), 0);
  for (const auto& [name, amount] : host.spec.resources) {
    const ResourceId id = InternHostResource(name);
    if (id >= host.resource_total.size()) host.resource_total.resize(id + 1, 0);
    host.resource_total[id] = amount;
  }
}

void Topology::LeaveHost(Host& host) {
  if (host.AcceptsWork()) free_slots_ -= host.FreeSlots();
  host.membership = HostMembership::kLeaving;
  if (host.spec.state != HostState::kUnavail) host.spec.state = HostState::kClosed;
  SyncHostSlots(host);
}

void Topology::DropHost(Host& host) {
  if (host.AcceptsWork()) free_slots_ -= host.FreeSlots();
  host.membership = HostMembership::kGone;
  host.spec.state = HostState::kUnavail;
  total_slots_ -= host.spec.slots;
  host.spec.slots = 0;
  SyncHostSlots(host);
}

ResourceId Topology::InternHostResource(const std::string& name) {
  if (auto id = FindHostResource(name)) return *id;
  host_resources_.push_back(name);
  return static_cast<ResourceId>(host_resources_.size() - 1);
}

void Topology::SyncHostSlots(const Host& host) {
  const size_t h = host.index;
  if (h >= host_slots_.free.size()) {
    host_slots_.free.resize(h + 1);
    host_slots_.total.resize(h + 1);
    host_slots_.accepts_work.resize(h + 1);
    host_slots_.idle.resize(h + 1);
    host_slots_.has_free.resize(h / 64 + 1);
    host_slots_.gpu_free.resize(h + 1);
  }
  const bool works = host.AcceptsWork();
  host_slots_.any_gpus = host_slots_.any_gpus || host.devices.all != 0;
  host_slots_.gpu_free[h] = works ? host.GpusFree() : 0;
  SetFreeSlots(host_slots_, h, works ? host.FreeSlots() : 0);
  if (host_slots_.total[h] != host.spec.slots || host_slots_.totals_version == 0) {
    host_slots_.total[h] = host.spec.slots;
    host_slots_.totals_version = NextTotalsVersion();
  }
  host_slots_.accepts_work[h] = works;
  host_slots_.idle[h] = works && host.running_jobs == 0;
}

Status Topology::AddQueue(const QueueSpec& spec, const HostGroups& host_groups) {
  if (queue_by_name_.contains(spec.name)) {
    return Status(StatusCode::kAlreadyExists, "queue '" + spec.name + "' is defined twice");
  }
  QueueLayout layout;
  SLUICE_RETURN_IF_ERROR(ResolveQueueHosts(
      spec, host_groups, [this](const std::string& name) { return FindHost(name); }, layout));
  Result<DispatchWindows> windows = ParseWindows(spec);
  if (!windows) return windows.error();
  layout.windows = std::move(*windows);
  AppendQueue(spec, std::move(layout));
  return Status::Ok();
}

void Topology::AppendQueue(const QueueSpec& spec, QueueLayout layout) {
  Queue queue;
  queue.index = static_cast<QueueIndex>(queues_.size());
  queue.spec = spec;
  queue.all_hosts = layout.all_hosts;
  queue.hosts = std::move(layout.hosts);
  queue_by_name_.emplace(spec.name, queue.index);
  queues_.push_back(std::move(queue));
  windows_.push_back(std::move(layout.windows));
}

void Topology::SetSharedResources(const std::map<std::string, int64_t>& totals) {
  for (const auto& [name, total] : totals) {
    auto id = FindSharedResource(name);
    if (!id) {
      shared_resources_.push_back(name);
      shared_total_.push_back(0);
      shared_used_.push_back(0);
      id = static_cast<ResourceId>(shared_resources_.size() - 1);
    }
    shared_total_[*id] = total;
  }
  // A shared resource dropped from the configuration keeps its id with no capacity.
  for (ResourceId id = 0; id < shared_resources_.size(); ++id) {
    if (!totals.contains(shared_resources_[id])) shared_total_[id] = 0;
  }
}

Status Topology::SetDefaultQueue(const std::string& name) {
  auto queue = FindQueue(name);
  if (!queue) return NotFound("default_queue: no queue named '" + name + "'");
  default_queue_ = *queue;
  return Status::Ok();
}

Status Topology::SetHostState(std::string_view name, HostState state) {
  auto index = FindHost(name);
  if (!index) return NotFound("no host named '" + std::string(name) + "'");
  Host& host = hosts_[*index];
  // A host out of the configuration never takes work again (only its agent's loss shows).
  if (host.membership == HostMembership::kGone) state = HostState::kUnavail;
  if (host.membership == HostMembership::kLeaving && state != HostState::kUnavail) {
    state = HostState::kClosed;
  }
  if (host.AcceptsWork()) free_slots_ -= host.FreeSlots();
  host.spec.state = state;
  if (host.AcceptsWork()) free_slots_ += host.FreeSlots();
  SyncHostSlots(host);
  return Status::Ok();
}

Result<const QueueSpec*> Topology::SetQueueStatus(std::string_view name, std::optional<bool> open,
                                                  std::optional<bool> active) {
  auto index = FindQueue(name);
  if (!index) return NotFound("no queue named '" + std::string(name) + "'");
  QueueSpec& spec = queues_[*index].spec;
  if (open) spec.open = *open;
  if (active) spec.active = *active;
  return &spec;
}

void Topology::Occupy(QueueIndex queue_index, const Allocation& allocation) {
  for (const HostGrant& grant : allocation.hosts) {
    Host& host = hosts_[grant.host];
    const int32_t taken = host.SlotsTaken(grant);
    SLUICE_CHECK(grant.slots > 0 && taken <= host.FreeSlots() && host.AcceptsWork());
    SLUICE_CHECK(!grant.whole_host || host.running_jobs == 0);
    host.used_slots += taken;
    host.running_jobs += 1;
    HoldGpus(host, grant);
    if (grant.gpu_mem_mb > 0) gpu_shared_hosts_.insert(host.index);
    free_slots_ -= taken;
    SyncHostUse(host_slots_, host);
    for (const ResourceAmount& r : grant.resources) {
      SLUICE_CHECK(r.amount <= host.ResourceFree(r.id));
      if (r.id >= host.resource_used.size()) host.resource_used.resize(r.id + 1, 0);
      host.resource_used[r.id] += r.amount;
    }
  }
  for (const ResourceAmount& r : allocation.shared) {
    SLUICE_CHECK(r.amount <= shared_total_[r.id] - shared_used_[r.id]);
    shared_used_[r.id] += r.amount;
  }
  Queue& queue = queues_[queue_index];
  queue.running_jobs += 1;
  queue.used_slots += allocation.TotalSlots();
}

bool Topology::Vacate(QueueIndex queue_index, const Allocation& allocation) {
  bool gone = false;
  for (const HostGrant& grant : allocation.hosts) {
    Host& host = hosts_[grant.host];
    const int32_t taken = host.SlotsTaken(grant);
    host.used_slots -= taken;
    host.running_jobs -= 1;
    ReleaseGpus(host, grant);
    if (grant.gpu_mem_mb > 0 && host.gpus_shared == 0) gpu_shared_hosts_.erase(host.index);
    SLUICE_CHECK(host.used_slots >= 0);
    if (host.AcceptsWork()) free_slots_ += taken;
    SyncHostUse(host_slots_, host);
    for (const ResourceAmount& r : grant.resources) host.resource_used[r.id] -= r.amount;
    if (host.membership == HostMembership::kLeaving && host.running_jobs == 0) {
      DropHost(host);  // its drain is over
      gone = true;
    }
  }
  for (const ResourceAmount& r : allocation.shared) shared_used_[r.id] -= r.amount;
  Queue& queue = queues_[queue_index];
  queue.running_jobs -= 1;
  queue.used_slots -= allocation.TotalSlots();
  return gone;
}

Result<Topology::ReconfigurePlan> Topology::PlanReconfigure(const ClusterConfig& config) const {
  // The index every listed host will have: its own when kept, the next free ones (in order of
  // first listing) when new. A host not listed is removed.
  std::unordered_map<std::string, HostIndex> index_of;
  HostIndex next = static_cast<HostIndex>(hosts_.size());
  std::vector<const HostSpec*> new_hosts;
  for (const HostSpec& spec : config.hosts) {
    if (index_of.contains(spec.name)) continue;
    auto kept = FindHost(spec.name);
    index_of.emplace(spec.name, kept ? *kept : next++);
    if (!kept) new_hosts.push_back(&spec);
  }
  std::set<std::string, std::less<>> listed_queues;
  for (const QueueSpec& spec : config.queues) listed_queues.insert(spec.name);
  // 1. A removed queue holds no job (a removed host may: it drains, ApplyReconfigure).
  for (const Queue& queue : queues_) {
    if (!listed_queues.contains(queue.spec.name) &&
        (queue.running_jobs > 0 || !queue.pending.empty())) {
      return FailedPrecondition("queue '" + queue.spec.name + "' still has jobs");
    }
  }
  // 2. Every queue's windows compile and its host group names listed hosts.
  ReconfigurePlan plan;
  auto find = [&](const std::string& name) -> std::optional<HostIndex> {
    auto it = index_of.find(name);
    if (it == index_of.end()) return std::nullopt;
    return it->second;
  };
  for (const QueueSpec& spec : config.queues) {
    QueueLayout& layout = plan.queues.emplace_back();
    Result<DispatchWindows> windows = ParseWindows(spec);
    if (!windows) return windows.error();
    layout.windows = std::move(*windows);
    SLUICE_RETURN_IF_ERROR(ResolveQueueHosts(spec, config.host_groups, find, layout));
  }
  // 3. A kept host keeps room for the slots in use.
  for (const HostSpec& spec : config.hosts) {
    auto index = FindHost(spec.name);
    if (!index) continue;
    if (spec.slots < hosts_[*index].used_slots) {
      return FailedPrecondition("host '" + spec.name + "': slots " + std::to_string(spec.slots) +
                                " below the " + std::to_string(hosts_[*index].used_slots) +
                                " in use");
    }
  }
  // 4. New hosts are well formed.
  for (const HostSpec* spec : new_hosts) SLUICE_RETURN_IF_ERROR(CheckNewHost(*spec));
  return plan;
}

void Topology::ApplyReconfigure(const ClusterConfig& config, ReconfigurePlan plan) {
  SLUICE_CHECK(plan.queues.size() == config.queues.size());
  // 1. Hosts: kept ones (leaving or gone ones too) take their new spec, new ones are appended
  //    (a name listed twice: the last spec wins).
  std::set<std::string, std::less<>> listed_hosts;
  for (const HostSpec& spec : config.hosts) {
    listed_hosts.insert(spec.name);
    if (auto index = FindHost(spec.name)) {
      hosts_[*index].membership = HostMembership::kListed;
      UpdateHost(hosts_[*index], spec);
    } else {
      AppendHost(spec);
    }
  }
  SetSharedResources(config.shared_resources);
  // 2. A removed host stays in hosts_ (indices never move): leaving while it runs jobs, else
  //    gone.
  for (Host& host : hosts_) {
    if (listed_hosts.contains(host.spec.name)) continue;
    if (host.running_jobs > 0) {
      LeaveHost(host);
    } else {
      DropHost(host);
    }
  }
  // 3. Queues: kept ones take their new spec and layout, new ones are appended; a removed
  //    one stays, closed and inactive.
  std::set<std::string, std::less<>> listed_queues;
  for (size_t i = 0; i < config.queues.size(); ++i) {
    const QueueSpec& spec = config.queues[i];
    QueueLayout& layout = plan.queues[i];
    listed_queues.insert(spec.name);
    auto index = FindQueue(spec.name);
    if (!index) {
      AppendQueue(spec, std::move(layout));
      continue;
    }
    Queue& queue = queues_[*index];
    queue.spec = spec;
    queue.all_hosts = layout.all_hosts;
    queue.hosts = std::move(layout.hosts);
    windows_[*index] = std::move(layout.windows);
  }
  for (Queue& queue : queues_) {
    if (listed_queues.contains(queue.spec.name)) continue;
    queue.spec.open = false;
    queue.spec.active = false;
  }
  // 4. The default queue: the named one if it exists, else the first listed, else 0.
  default_queue_ = 0;
  if (!config.default_queue.empty()) {
    if (auto queue = FindQueue(config.default_queue)) default_queue_ = *queue;
  } else if (!config.queues.empty()) {
    default_queue_ = *FindQueue(config.queues.front().name);
  }
}

}  // namespace sluice::core
