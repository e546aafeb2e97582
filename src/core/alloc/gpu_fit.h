// GPU fit and pick (R-GPU-3): which of a host's free devices a gpu[] request may take, how
// many of its tasks they hold, and which devices a grant gets.
//
// Internal to core/alloc. All functions are pure over masks (bit i: device i): the capacity
// supplies the free devices, HostDevices the host's NVLink peers and NUMA groups.
// Rules:
//  - per host (num=N): every host of the allocation gets N devices, whatever its task count;
//    per task (num=N/task): N devices per task placed on the host.
//  - glink: the devices of the host (per task: of each task) are pairwise NVLink-connected.
//  - aff: the devices of the host (per task: of each task) share one NUMA node.
//  - picks are best fit: the NUMA group with the fewest usable devices that still holds the
//    set, and within it devices whose NVLink peers are already taken, so that linked groups
//    stay whole for glink jobs. Fit and pick share one greedy order, so a host's fit is
//    exactly what picks can deliver.
// Cost: per host O(groups) word operations; glink adds a bounded clique search
// (kCliqueBudget steps, ~70 sets on an 8-GPU host).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/model/devices.h"
#include "core/resreq/request.h"

namespace sluice::core {

struct GpuDemand {
  int32_t num = 0;  // devices per host or per task; 0: the primary asks no GPUs
  bool per_task = false;
  bool link = false;
  bool affinity = false;
  // Shared mode: the memory reserved on each device, which other shared grants may hold
  // too (Capacity::ShareableGpus); 0: devices held whole.
  int64_t shared_mem_mb = 0;
  // The devices of each host that match gmodel/gmem (by HostIndex); null: every device.
  const std::vector<uint64_t>* match = nullptr;

  bool any() const { return num > 0; }
  // Devices a grant of `tasks` tasks takes.
  int64_t NeedFor(int32_t tasks) const {
    return per_task ? static_cast<int64_t>(num) * tasks : num;
  }
};

inline constexpr int32_t kUnboundedGpuFit = std::numeric_limits<int32_t>::max();

// The demand of a primary: its gpu[], or else its rusage[gpu=N] (per task, devices by index
// all the same). `match` is left for the caller.
GpuDemand GpuDemandOf(const resreq::Primary& primary, bool gpu_is_host_resource);

// Tasks the host can take as far as its GPUs go: kUnboundedGpuFit for a per-host demand the
// devices satisfy, 0 when they do not. `usable`: its free devices that match.
int32_t GpuTaskFit(const GpuDemand& demand, const HostDevices& devices, uint64_t usable);

// The largest set a demand could get on the host now (the most linked devices for glink,
// the fullest NUMA group for aff): what a pending reason reports as available.
int32_t GpuLargestSet(const GpuDemand& demand, const HostDevices& devices, uint64_t usable);

// The devices a grant of `tasks` tasks takes from `usable`; `free` is every free device of
// the host (peers already taken are preferred). REQUIRES: GpuTaskFit(...) >= tasks.
uint64_t PickGpus(const GpuDemand& demand, const HostDevices& devices, uint64_t usable,
                  uint64_t free, int32_t tasks);

// "NVLink-connected, on one NUMA node, gmodel=A100, gmem=40960": the constraints in words,
// for pending reasons; empty without any.
std::string GpuConstraintText(const resreq::GpuRequest& request);

}  // namespace sluice::core
