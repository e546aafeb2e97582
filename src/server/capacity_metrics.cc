#include "server/capacity_metrics.h"

#include "store/history.h"

namespace sluice::server {

namespace {

constexpr core::HostState kHostStates[] = {core::HostState::kOk, core::HostState::kClosed,
                                           core::HostState::kUnavail, core::HostState::kDraining};

void WriteHosts(const CapacitySnapshot& capacity, PromWriter& w) {
  w.Family("sluice_host_slots", "gauge", "Slots of each host: configured (total) and used.");
  for (const HostCapacity& h : capacity.hosts) {
    w.Sample("sluice_host_slots", {{"host", h.name}, {"state", "total"}}, h.slots);
    w.Sample("sluice_host_slots", {{"host", h.name}, {"state", "used"}}, h.used_slots);
  }
  w.Family("sluice_host_running_jobs", "gauge", "Jobs holding slots on each host.");
  for (const HostCapacity& h : capacity.hosts) {
    w.Sample("sluice_host_running_jobs", {{"host", h.name}}, h.running_jobs);
  }
  w.Family("sluice_host_resources", "gauge",
           "Consumable resources of each host (mem in MB): configured (total) and used.");
  for (const HostCapacity& h : capacity.hosts) {
    for (size_t r = 0; r < capacity.resources.size(); ++r) {
      const double total = r < h.resource_total.size() ? double(h.resource_total[r]) : 0;
      const double used = r < h.resource_used.size() ? double(h.resource_used[r]) : 0;
      if (total == 0 && used == 0) continue;  // a resource this host does not have
      w.Sample("sluice_host_resources",
               {{"host", h.name}, {"resource", capacity.resources[r]}, {"state", "total"}}, total);
      w.Sample("sluice_host_resources",
               {{"host", h.name}, {"resource", capacity.resources[r]}, {"state", "used"}}, used);
    }
  }
  w.Family("sluice_host_status", "gauge", "1 for each host's status (ok, closed, unavail, "
                                          "draining), 0 for the others.");
  for (const HostCapacity& h : capacity.hosts) {
    for (core::HostState s : kHostStates) {
      w.Sample("sluice_host_status", {{"host", h.name}, {"status", std::string(ToString(s))}},
               h.state == s ? 1 : 0);
    }
  }
}

void WriteUsers(const CapacitySnapshot& capacity, PromWriter& w) {
  w.Family("sluice_user_jobs", "gauge", "Each user's jobs that have not ended, by state.");
  for (const auto& [key, n] : capacity.user_jobs) {
    w.Sample("sluice_user_jobs", {{"user", key.first}, {"state", key.second}}, double(n));
  }
  w.Family("sluice_user_slots", "gauge", "Slots held by each user's starting and running jobs.");
  for (const auto& [user, n] : capacity.user_slots) {
    w.Sample("sluice_user_slots", {{"user", user}}, double(n));
  }
}

// Cluster-wide GPU series (R-GPU-4), only on a cluster with GPUs. Fragmentation: the share
// of free GPUs that sit on partly used hosts, where a job wanting a whole host cannot use
// them (0 when every free GPU is on an idle host, or none is free).
void WriteGpus(const CapacitySnapshot& capacity, PromWriter& w) {
  int64_t total = 0;
  int64_t used = 0;
  int64_t free_on_partial = 0;
  for (const HostCapacity& h : capacity.hosts) {
    total += h.gpus;
    used += h.gpus_used;
    if (h.gpus_used > 0) free_on_partial += h.gpus - h.gpus_used;
  }
  if (total == 0) return;
  w.Family("sluice_host_gpus", "gauge", "GPUs of each host by model: configured and held.");
  for (const HostCapacity& h : capacity.hosts) {
    for (const auto& [model, counts] : h.gpus_by_model) {
      w.Sample("sluice_host_gpus", {{"host", h.name}, {"model", model}, {"state", "total"}},
               counts.first);
      w.Sample("sluice_host_gpus", {{"host", h.name}, {"model", model}, {"state", "used"}},
               counts.second);
    }
  }
  w.Family("sluice_gpus", "gauge", "GPUs of the cluster: configured (total) and held (used).");
  w.Sample("sluice_gpus", {{"state", "total"}}, double(total));
  w.Sample("sluice_gpus", {{"state", "used"}}, double(used));
  w.Family("sluice_gpu_fragmentation", "gauge",
           "Share of the free GPUs that are on hosts partly used by jobs (0-1).");
  const int64_t free = total - used;
  w.Sample("sluice_gpu_fragmentation", {}, free == 0 ? 0.0 : double(free_on_partial) / free);
}

}  // namespace

CapacitySnapshot CollectCapacity(const core::ClusterState& state, const JobCounts& counts,
                                 std::map<std::string, int64_t> user_slots) {
  CapacitySnapshot out;
  const core::Topology& topology = state.topology();
  out.resources = topology.host_resources();
  out.hosts.reserve(topology.hosts().size());
  for (const core::Host& h : topology.hosts()) {
    if (h.membership == core::HostMembership::kGone) continue;  // out of the configuration
    out.hosts.push_back({.name = h.spec.name,
                         .slots = h.spec.slots,
                         .used_slots = h.used_slots,
                         .running_jobs = h.running_jobs,
                         .state = h.spec.state,
                         .resource_total = h.resource_total,
                         .resource_used = h.resource_used,
                         .gpus = h.devices.count(),
                         .gpus_used = __builtin_popcountll(h.GpusHeld())});
    for (uint64_t rest = h.devices.all; rest != 0; rest &= rest - 1) {
      const auto i = static_cast<size_t>(__builtin_ctzll(rest));
      auto& [total, used] =
          out.hosts.back().gpus_by_model[i < h.devices.model.size() ? h.devices.model[i] : ""];
      ++total;
      used += static_cast<int32_t>(h.GpusHeld() >> i & 1);
    }
  }
  for (const auto& [key, n] : counts.by_user) {
    if (n > 0 && !store::IsEndedState(key.second)) out.user_jobs[key] = n;
  }
  for (auto& [user, n] : user_slots) {
    if (n > 0) out.user_slots.emplace(user, n);
  }
  return out;
}

void WriteCapacity(const CapacitySnapshot& capacity, PromWriter& w) {
  WriteHosts(capacity, w);
  WriteUsers(capacity, w);
  WriteGpus(capacity, w);
}

}  // namespace sluice::server
