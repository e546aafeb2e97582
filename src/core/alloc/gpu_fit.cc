#include "core/alloc/gpu_fit.h"

#include <algorithm>
#include <cmath>

namespace sluice::core {
namespace {

// Steps of one clique search: generous for any real host (8 GPUs: at most 255 subsets), a
// bound for a 64-device host declared fully linked. A search that runs out finds nothing,
// the same way every time.
constexpr int kCliqueBudget = 4096;

int Count(uint64_t mask) { return __builtin_popcountll(mask); }

// The first set of `n` pairwise-linked devices among `candidates`, in the order of their
// indexes (the lowest first device, then the lowest second, ...); 0 when there is none.
uint64_t FindClique(const HostDevices& devices, uint64_t candidates, int32_t n, int& budget) {
  if (n <= 0 || Count(candidates) < n) return 0;
  if (n == 1) return candidates & (~candidates + 1);
  for (uint64_t rest = candidates; Count(rest) >= n; rest &= rest - 1) {
    if (--budget < 0) return 0;
    const int i = __builtin_ctzll(rest);
    const uint64_t bit = uint64_t{1} << i;
    const uint64_t linked = devices.PeersOf(i) & rest & ~bit;
    if (const uint64_t tail = FindClique(devices, linked, n - 1, budget); tail != 0) {
      return tail | bit;
    }
  }
  return 0;
}

uint64_t FindClique(const HostDevices& devices, uint64_t candidates, int32_t n) {
  int budget = kCliqueBudget;
  return FindClique(devices, candidates, n, budget);
}

int32_t LargestClique(const HostDevices& devices, uint64_t candidates) {
  for (int32_t n = Count(candidates); n > 1; --n) {
    if (FindClique(devices, candidates, n) != 0) return n;
  }
  return candidates != 0 ? 1 : 0;
}

// Whether `usable` holds one set of `n` the demand accepts (linked or not; the caller has
// narrowed it to one NUMA group when aff asks it).
bool HasSet(const GpuDemand& demand, const HostDevices& devices, uint64_t usable, int32_t n) {
  return demand.link ? FindClique(devices, usable, n) != 0 : Count(usable) >= n;
}

// How many disjoint sets of `n` the greedy pick takes from `usable` one after another.
int32_t SetsIn(const GpuDemand& demand, const HostDevices& devices, uint64_t usable, int32_t n) {
  if (!demand.link) return Count(usable) / n;
  int32_t sets = 0;
  while (const uint64_t clique = FindClique(devices, usable, n)) {
    usable &= ~clique;
    ++sets;
  }
  return sets;
}

// The groups a set must come from: the NUMA groups under aff, else all devices as one.
template <typename Fn>
void ForEachGroup(const GpuDemand& demand, const HostDevices& devices, uint64_t usable, Fn&& fn) {
  if (!demand.affinity) {
    fn(usable);
    return;
  }
  for (uint64_t group : devices.numa_groups) fn(usable & group);
}

// `n` devices of `usable`, those with the most NVLink peers already taken first, then by
// index: a 1-GPU job lands next to used devices, not in the middle of a free linked group.
uint64_t PickPacked(const HostDevices& devices, uint64_t usable, uint64_t free, int32_t n) {
  if (devices.peers.empty()) return LowestBits(usable, n);
  struct Scored {
    int taken_peers;
    int index;
  };
  std::vector<Scored> order;
  for (uint64_t rest = usable; rest != 0; rest &= rest - 1) {
    const int i = __builtin_ctzll(rest);
    order.push_back(Scored{Count(devices.PeersOf(i) & ~free), i});
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Scored& a, const Scored& b) { return a.taken_peers > b.taken_peers; });
  uint64_t picked = 0;
  for (int32_t k = 0; k < n && k < static_cast<int32_t>(order.size()); ++k) {
    picked |= uint64_t{1} << order[static_cast<size_t>(k)].index;
  }
  return picked;
}

// One set of `n` for one host (per host) or one task (per task): from the best-fit group,
// linked when glink asks it. 0 when none.
uint64_t PickSet(const GpuDemand& demand, const HostDevices& devices, uint64_t usable,
                 uint64_t free, int32_t n) {
  uint64_t best = 0;
  int best_count = 0;
  ForEachGroup(demand, devices, usable, [&](uint64_t group) {
    if (!HasSet(demand, devices, group, n)) return;
    if (best == 0 || Count(group) < best_count) {
      best = group;
      best_count = Count(group);
    }
  });
  if (best == 0) return 0;
  return demand.link ? FindClique(devices, best, n) : PickPacked(devices, best, free, n);
}

}  // namespace

GpuDemand GpuDemandOf(const resreq::Primary& primary, bool gpu_is_host_resource) {
  GpuDemand demand;
  if (primary.gpu.num > 0) {
    demand.num = primary.gpu.num;
    demand.per_task = primary.gpu.per == resreq::GpuPer::kTask;
    demand.link = primary.gpu.link;
    demand.affinity = primary.gpu.affinity;
    if (primary.gpu.shared) demand.shared_mem_mb = primary.gpu.mem_mb;
    return demand;
  }
  if (!gpu_is_host_resource) return demand;
  for (const resreq::Rusage& r : primary.rusage) {
    if (r.resource != "gpu" || !(r.amount > 0)) continue;
    // More than a host can have never fits; clamped so that products cannot overflow.
    demand.num = static_cast<int32_t>(std::min<double>(std::ceil(r.amount), kMaxGpusPerHost + 1));
    demand.per_task = true;
  }
  return demand;
}

int32_t GpuTaskFit(const GpuDemand& demand, const HostDevices& devices, uint64_t usable) {
  if (!demand.per_task) {
    bool found = false;
    ForEachGroup(demand, devices, usable, [&](uint64_t group) {
      found = found || HasSet(demand, devices, group, demand.num);
    });
    return found ? kUnboundedGpuFit : 0;
  }
  if (!demand.affinity && !demand.link) return Count(usable) / demand.num;
  int32_t tasks = 0;
  ForEachGroup(demand, devices, usable,
               [&](uint64_t group) { tasks += SetsIn(demand, devices, group, demand.num); });
  return tasks;
}

int32_t GpuLargestSet(const GpuDemand& demand, const HostDevices& devices, uint64_t usable) {
  int32_t largest = 0;
  ForEachGroup(demand, devices, usable, [&](uint64_t group) {
    largest = std::max(largest, demand.link ? LargestClique(devices, group) : Count(group));
  });
  return largest;
}

uint64_t PickGpus(const GpuDemand& demand, const HostDevices& devices, uint64_t usable,
                  uint64_t free, int32_t tasks) {
  if (!demand.per_task) return PickSet(demand, devices, usable, free, demand.num);
  if (!demand.affinity && !demand.link) {
    return PickPacked(devices, usable, free, static_cast<int32_t>(demand.NeedFor(tasks)));
  }
  uint64_t picked = 0;
  for (int32_t t = 0; t < tasks; ++t) {
    const uint64_t set = PickSet(demand, devices, usable & ~picked, free & ~picked, demand.num);
    if (set == 0) return 0;  // cannot happen when the fit holds
    picked |= set;
  }
  return picked;
}

std::string GpuConstraintText(const resreq::GpuRequest& request) {
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  if (request.shared) add("shared");
  if (request.link) add("NVLink-connected");
  if (request.affinity) add("on one NUMA node");
  if (!request.model.empty()) add("gmodel=" + request.model);
  if (request.mem_mb > 0) add("gmem=" + std::to_string(request.mem_mb) + "MB");
  return text;
}

}  // namespace sluice::core
