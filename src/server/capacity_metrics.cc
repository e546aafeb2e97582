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

}  // namespace

CapacitySnapshot CollectCapacity(const core::ClusterState& state, const JobCounts& counts,
                                 std::map<std::string, int64_t> user_slots) {
  CapacitySnapshot out;
  const core::Topology& topology = state.topology();
  out.resources = topology.host_resources();
  out.hosts.reserve(topology.hosts().size());
  for (const core::Host& h : topology.hosts()) {
    out.hosts.push_back({.name = h.spec.name,
                         .slots = h.spec.slots,
                         .used_slots = h.used_slots,
                         .running_jobs = h.running_jobs,
                         .state = h.spec.state,
                         .resource_total = h.resource_total,
                         .resource_used = h.resource_used});
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
}

}  // namespace sluice::server
