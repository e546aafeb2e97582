// Topology: the hosts, queues and consumable resources of a cluster, and how much of each is
// in use. One of ClusterState's parts (cluster_state.h); ClusterState owns it and hands it out
// read-only, so its changing methods are called by ClusterState alone.
//
// Representation:
//  - hosts_ and queues_ are dense vectors addressed by HostIndex / QueueIndex; entries never
//    move or disappear once created (a host that leaves becomes `unavail` with no slots, a
//    queue that leaves becomes closed and inactive). A host the configuration drops while
//    jobs run on it leaves only when the last of them ends (HostMembership).
//  - host_slots_ mirrors hosts_ column-wise (SyncHostSlots after every change to a host).
//  - Resource names by ResourceId: host resources (mem, gpu, ...) and shared resources
//    (licenses) have separate id spaces; ids are assigned in order of first appearance and
//    never change.
// Invariants: total_slots_ is the sum of every host's configured slots (a leaving host's
// included until it is gone); free_slots_ the sum of FreeSlots() over the hosts that accept
// work; a host's used slots never exceed its slots; a leaving host runs jobs and never accepts
// work; a gone host is unavail with no slots; windows_ has one entry per queue.
// Thread-safety: none; owned by ClusterState.
// Implements the host, queue and resource model of SPEC §2.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/ids.h"
#include "base/status.h"
#include "base/time.h"
#include "core/model/config.h"
#include "core/model/devices.h"
#include "core/model/job.h"
#include "core/model/pending_set.h"
#include "core/model/window.h"

namespace sluice::core {

// Whether a host is in the configuration (R-OPS-3). A reconfiguration that drops a host
// running jobs makes it kLeaving: closed (unavail when its agent is lost), so nothing new
// starts there, while the jobs it runs go on to their end with their slots and resources;
// the end of its last job makes it kGone, as the reconfiguration makes a host it drops idle:
// unavail with no slots, kept only because host indices never change. A configuration that
// lists it again makes it kListed.
enum class HostMembership : uint8_t { kListed, kLeaving, kGone };

struct Host {
  HostSpec spec;
  HostIndex index = 0;
  HostMembership membership = HostMembership::kListed;
  int32_t used_slots = 0;
  int32_t running_jobs = 0;
  std::vector<int64_t> resource_total;  // by host ResourceId; shorter vectors mean 0
  std::vector<int64_t> resource_used;
  HostDevices devices;    // its GPUs (R-GPU-1)
  uint64_t gpus_used = 0; // the devices jobs hold whole
  // Shared mode: the devices shared grants hold, and the memory they reserve on each (by
  // index; empty until a shared grant). A device is in at most one of the two masks.
  uint64_t gpus_shared = 0;
  std::vector<int64_t> gpu_mem_shared;

  // Devices jobs hold, whole or shared; and those no job holds.
  uint64_t GpusHeld() const { return gpus_used | gpus_shared; }
  uint64_t GpusFree() const { return devices.all & ~GpusHeld(); }
  // Whether `grant`'s devices can be held now: held whole, they are free; shared, no job
  // holds them whole and each has gpu_mem_mb of memory left.
  bool CanHoldGpus(const HostGrant& grant) const;
  // Device memory shared grants reserve on device i.
  int64_t GpuMemShared(int32_t i) const {
    return static_cast<size_t>(i) < gpu_mem_shared.size() ? gpu_mem_shared[static_cast<size_t>(i)]
                                                          : 0;
  }

  int32_t FreeSlots() const { return spec.slots - used_slots; }
  bool AcceptsWork() const { return spec.state == HostState::kOk; }
  int64_t ResourceTotal(ResourceId id) const {
    return id < resource_total.size() ? resource_total[id] : 0;
  }
  int64_t ResourceUsed(ResourceId id) const {
    return id < resource_used.size() ? resource_used[id] : 0;
  }
  int64_t ResourceFree(ResourceId id) const { return ResourceTotal(id) - ResourceUsed(id); }
  // Slots a grant takes from this host: all of them for an exclusive (whole-host) grant.
  int32_t SlotsTaken(const HostGrant& grant) const {
    return grant.whole_host ? spec.slots : grant.slots;
  }
};

// What committed cycles did in a queue, since the state was created (metrics, R-SRV-4).
struct AdmissionTotals {
  int64_t admitted = 0;                 // jobs started
  int64_t backfilled = 0;               // of which ahead of a blocked head
  int64_t temporarily_unavailable = 0;  // allocation attempts that did not fit
  int64_t unschedulable = 0;            // jobs ended UNSCHEDULABLE
  int64_t preempted = 0;                // running jobs preempted (R-CAP-3, R-CAP-4)

  friend bool operator==(const AdmissionTotals&, const AdmissionTotals&) = default;
};

struct Queue {
  QueueSpec spec;
  AdmissionTotals totals;
  QueueIndex index = 0;
  // The hosts of the queue's host group in host order; empty with all_hosts when it has none.
  std::vector<HostIndex> hosts;
  bool all_hosts = true;
  PendingSet pending;
  int32_t running_jobs = 0;
  int64_t used_slots = 0;
  // R-CAP-3: when this queue, below its guarantee with runnable pending work, reclaims.
  std::optional<Instant> reclaim_deadline;
};

// Every host's slots as a cycle's Capacity starts from them, by HostIndex, kept dense so that
// building one is a copy rather than a walk over the hosts.
struct HostSlots {
  std::vector<int32_t> free;          // free slots; 0 on a host that does not accept work
  std::vector<int32_t> total;         // configured slots
  std::vector<uint8_t> accepts_work;  // Host::AcceptsWork()
  std::vector<uint8_t> idle;          // accepts work and runs no job
  // Bit h % 64 of word h / 64 is set when free[h] > 0: Capacity's index of hosts with a free
  // slot, kept here so that a cycle copies it instead of rebuilding it from `free`.
  std::vector<uint64_t> has_free;
  int64_t total_free = 0;  // the sum of `free`
  // GPUs no job holds, by host (0 on a host that does not accept work); kept only when some
  // host has GPUs (`any_gpus`), so a cluster without them copies nothing more per cycle.
  std::vector<uint64_t> gpu_free;
  bool any_gpus = false;
  // Names this content of `total`: a new number whenever a host's configured slots change,
  // drawn from one process-wide sequence, so that equal versions mean equal totals even
  // across states (a copy of a state keeps its original's). Capacity::Reset copies the
  // totals only when the version is not the one it last copied.
  uint64_t totals_version = 0;
};

using HostGroups = std::map<std::string, std::vector<std::string>>;

class Topology {
 public:
  // What a reconfiguration will do, computed whole before anything changes (PlanReconfigure):
  // for each queue of the new configuration, in its order, the hosts it may use and its
  // compiled dispatch windows.
  struct QueueLayout {
    bool all_hosts = true;
    std::vector<HostIndex> hosts;  // sorted, unique; empty with all_hosts
    DispatchWindows windows;
  };
  struct ReconfigurePlan {
    std::vector<QueueLayout> queues;  // by the new config's queue index
  };

  // --- Reads. ---

  const std::vector<Host>& hosts() const { return hosts_; }
  const HostSlots& host_slots() const { return host_slots_; }
  // Hosts some of whose GPUs running jobs share (gpu[mode=shared]), in host order.
  const std::set<HostIndex>& gpu_shared_hosts() const { return gpu_shared_hosts_; }
  const std::vector<Queue>& queues() const { return queues_; }
  std::optional<HostIndex> FindHost(std::string_view name) const;
  std::optional<QueueIndex> FindQueue(std::string_view name) const;
  // Where a job without a queue goes: default_queue, else the first queue listed.
  QueueIndex default_queue() const { return default_queue_; }
  // The queue's compiled dispatch windows (R-Q-1), by QueueIndex.
  const DispatchWindows& WindowsOf(QueueIndex queue) const { return windows_[queue]; }

  const std::vector<std::string>& host_resources() const { return host_resources_; }
  const std::vector<std::string>& shared_resources() const { return shared_resources_; }
  std::optional<ResourceId> FindHostResource(std::string_view name) const;
  std::optional<ResourceId> FindSharedResource(std::string_view name) const;
  int64_t SharedTotal(ResourceId id) const { return shared_total_[id]; }
  int64_t SharedUsed(ResourceId id) const { return shared_used_[id]; }

  // Slots configured on all hosts, whatever their state (classification capacity, R-ADM-1).
  int64_t total_slots() const { return total_slots_; }
  // Free slots on hosts that accept work.
  int64_t free_slots() const { return free_slots_; }
  // Host names by HostIndex (limit host scopes are resolved against them).
  std::vector<std::string> HostNames() const;

  // Calls fn(HostIndex) for every host the queue may use, in host order.
  template <typename Fn>
  void ForEachHostOf(const Queue& queue, Fn&& fn) const {
    if (!queue.all_hosts) {
      for (HostIndex h : queue.hosts) fn(h);
      return;
    }
    for (HostIndex h = 0; h < hosts_.size(); ++h) fn(h);
  }

  // --- Changes (ClusterState only). ---

  // Appends a host, or lists a gone host of that name again with `spec` (its index stays).
  // Errors: kInvalidArgument for negative slots or a negative resource amount,
  // kAlreadyExists for a name already defined (and not gone).
  Status AddHost(HostSpec spec);
  // Appends a queue using the hosts of `host_groups[spec.host_group]` (every host when the
  // group is empty). Errors: kAlreadyExists for a name already defined, kNotFound for an
  // unknown group or a group naming an unknown host, the windows' error prefixed with the
  // queue.
  Status AddQueue(const QueueSpec& spec, const HostGroups& host_groups);
  // Sets the shared resources' totals; a shared resource dropped from `totals` keeps its id
  // with no capacity.
  void SetSharedResources(const std::map<std::string, int64_t>& totals);
  // Errors: kNotFound naming `default_queue:` for an unknown queue.
  Status SetDefaultQueue(const std::string& name);
  // A leaving host takes kUnavail as asked and any other state as kClosed; a gone one stays
  // kUnavail. Errors: kNotFound for an unknown host.
  Status SetHostState(std::string_view host, HostState state);
  // Opens/closes and activates/inactivates a queue; unset fields stay. Returns the queue's
  // new spec. Errors: kNotFound for an unknown queue.
  Result<const QueueSpec*> SetQueueStatus(std::string_view queue, std::optional<bool> open,
                                          std::optional<bool> active);
  // The queue for ClusterState's job bookkeeping (pending set, counters, totals, deadline).
  Queue& MutableQueue(QueueIndex queue) { return queues_[queue]; }

  // Takes an allocation's slots and resources from its hosts, the shared resources and
  // `queue`'s counters. REQUIRES: every grant fits its host's free slots and resources on a
  // host that accepts work (whole-host grants on idle hosts), the shared amounts are free.
  void Occupy(QueueIndex queue, const Allocation& allocation);
  // Gives them back; a leaving host whose last job this was is gone after it. Returns whether
  // a host went so. REQUIRES: Occupy(queue, allocation) was called and not undone.
  bool Vacate(QueueIndex queue, const Allocation& allocation);

  // Checks a whole new configuration against this topology and computes how to apply it.
  // Changes nothing. Errors, in this order: kFailedPrecondition for a removed queue that
  // still has jobs; a queue's windows error; kNotFound for a queue naming an unknown host
  // group or a group naming a host the config does not list; kFailedPrecondition for a kept
  // host whose slots fall below those in use; then AddHost's errors for the first new host
  // (in config order) that has them. A removed host may run jobs: it leaves when they end.
  Result<ReconfigurePlan> PlanReconfigure(const ClusterConfig& config) const;
  // Replaces hosts, shared resources, queues and the default queue by those of `config`.
  // Removed hosts running jobs become leaving, idle ones gone (HostMembership); removed
  // queues closed and inactive.
  // REQUIRES: `plan` is PlanReconfigure(config) on this unchanged topology. Cannot fail.
  void ApplyReconfigure(const ClusterConfig& config, ReconfigurePlan plan);

 private:
  static Status CheckNewHost(const HostSpec& spec);
  void AppendHost(HostSpec spec);
  void UpdateHost(Host& host, HostSpec spec);
  void AppendQueue(const QueueSpec& spec, QueueLayout layout);
  void SetHostSpec(Host& host, HostSpec spec);
  // A host the configuration no longer lists: leaving while it runs jobs, else gone.
  void LeaveHost(Host& host);
  void DropHost(Host& host);
  ResourceId InternHostResource(const std::string& name);
  void SyncHostSlots(const Host& host);

  std::vector<Host> hosts_;
  HostSlots host_slots_;
  std::set<HostIndex> gpu_shared_hosts_;
  std::vector<Queue> queues_;
  std::vector<DispatchWindows> windows_;                       // by QueueIndex
  std::unordered_map<std::string, HostIndex> host_by_name_;    // lookups only
  std::unordered_map<std::string, QueueIndex> queue_by_name_;  // lookups only
  std::vector<std::string> host_resources_;
  std::vector<std::string> shared_resources_;
  std::vector<int64_t> shared_total_;
  std::vector<int64_t> shared_used_;
  QueueIndex default_queue_ = 0;
  int64_t total_slots_ = 0;
  int64_t free_slots_ = 0;
};

}  // namespace sluice::core
