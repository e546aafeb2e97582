#include "core/explain/host_detail.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/alloc/capacity.h"
#include "core/alloc/gpu_fit.h"
#include "core/alloc/host_view.h"

namespace sluice::core {
namespace {

// The first part, over all alternatives, whose select[] the host passes.
const resreq::Primary* MatchingPart(const Job& job, const ClusterState& state, HostIndex h,
                                    const CapacityHostView& view) {
  for (const resreq::Compound& alternative : job.request->alternatives) {
    for (const resreq::Primary& part : alternative.parts) {
      if (state.requests().PassesSelect(part.select, h, view)) return &part;
    }
  }
  return nullptr;
}

HostVerdict Judge(const Job& job, const ClusterState& state, const Capacity& capacity, HostIndex h,
                  CapacityHostView& view) {
  HostVerdict verdict{.host = h};
  view.Bind(h);
  const resreq::Primary* part = MatchingPart(job, state, h, view);
  const Host& host = state.topology().hosts()[h];
  if (part == nullptr) {
    verdict.code = ReasonCode::kNoMatch;
    return verdict;
  }
  if (!host.AcceptsWork()) {
    verdict.code =
        host.spec.state == HostState::kUnavail ? ReasonCode::kHostUnavail : ReasonCode::kHostClosed;
    return verdict;
  }
  if (job.spec.exclusive && !capacity.Idle(h)) {
    verdict.code = ReasonCode::kExclusive;
    return verdict;
  }
  int64_t fit = capacity.FreeSlots(h);
  if (fit <= 0) {
    verdict.resource = "slots";
    verdict.needed = 1;
    return verdict;
  }
  for (const resreq::Rusage& r : part->rusage) {
    const auto id = state.topology().FindHostResource(r.resource);
    const int64_t per_task = static_cast<int64_t>(std::ceil(r.amount));
    if (!id || per_task == 0) continue;  // shared resources are per job, not per host
    const int64_t free = capacity.FreeResource(h, *id);
    if (free < per_task) {
      verdict.resource = r.resource;
      verdict.needed = per_task;
      verdict.available = free;
      return verdict;
    }
    fit = std::min(fit, free / per_task);
  }
  const bool has_gpus = state.topology().FindHostResource("gpu").has_value();
  if (const GpuDemand gpu = GpuDemandOf(*part, has_gpus); gpu.any()) {
    // The devices as the allocator judges them (R-GPU-4): free, of the model and memory
    // asked, linked or on one NUMA node when asked.
    uint64_t usable = capacity.FreeGpus(h);
    if (const auto* match = capacity.GpuMatchColumn(state, part->gpu.model, part->gpu.mem_mb)) {
      usable &= (*match)[h];
    }
    const int32_t gpu_fit = GpuTaskFit(gpu, host.devices, usable);
    if (gpu_fit == 0) {
      verdict.resource = "gpu";
      verdict.needed = gpu.num;
      verdict.available = GpuLargestSet(gpu, host.devices, usable);
      verdict.per = gpu.per_task ? "task" : "host";
      verdict.devices = GpuConstraintText(part->gpu);
      return verdict;
    }
    fit = std::min<int64_t>(fit, gpu_fit);
  }
  verdict.room = true;
  verdict.available = fit;
  return verdict;
}

}  // namespace

std::vector<HostVerdict> ExplainHosts(const Job& job, const ClusterState& state) {
  std::vector<HostVerdict> verdicts;
  const Capacity capacity(state);
  CapacityHostView view(state, capacity);
  const Topology& topology = state.topology();
  topology.ForEachHostOf(topology.queues()[job.queue], [&](HostIndex h) {
    // A host out of the configuration is no reason (a restart forgets it).
    if (topology.hosts()[h].membership == HostMembership::kGone) return;
    verdicts.push_back(Judge(job, state, capacity, h, view));
  });
  return verdicts;
}

std::string RenderHostVerdict(const HostVerdict& v) {
  if (v.room)
    return "Has room for " + std::to_string(v.available) + (v.available == 1 ? " task" : " tasks");
  if (v.code != ReasonCode::kNoResource) return std::string(Headline(v.code));
  if (v.resource == "slots") return "Not enough job slots (0 free)";
  if (!v.devices.empty()) {  // "Not enough gpu NVLink-connected (needs 2 per host, 1 free)"
    return "Not enough " + v.resource + " " + v.devices + " (needs " + std::to_string(v.needed) +
           " per " + v.per + ", " + std::to_string(v.available) + " free)";
  }
  return "Not enough " + v.resource + " (needs " + std::to_string(v.needed) + " per " + v.per +
         ", " + std::to_string(v.available) + " free)";
}

std::string RenderHostDetail(const std::vector<HostVerdict>& verdicts, const ClusterState& state,
                             size_t max_names) {
  // Lines in the order their first host appears.
  std::vector<std::string> order;
  std::map<std::string, std::vector<HostIndex>> hosts_of;
  for (const HostVerdict& v : verdicts) {
    std::string text = RenderHostVerdict(v);
    auto [it, inserted] = hosts_of.try_emplace(text);
    if (inserted) order.push_back(text);
    it->second.push_back(v.host);
  }
  std::string out;
  for (const std::string& text : order) {
    const std::vector<HostIndex>& hosts = hosts_of[text];
    std::string names;
    const size_t shown = std::min(hosts.size(), max_names);
    for (size_t i = 0; i < shown; ++i)
      names += (i > 0 ? ", " : "") + state.topology().hosts()[hosts[i]].spec.name;
    if (hosts.size() > shown) names += " and " + std::to_string(hosts.size() - shown) + " more";
    out += "  " + names + ": " + text + "\n";
  }
  return out;
}

}  // namespace sluice::core
