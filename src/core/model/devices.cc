#include "core/model/devices.h"

#include <algorithm>
#include <map>

namespace sluice::core {

HostDevices CompileDevices(const HostSpec& spec, int64_t count) {
  HostDevices devices;
  if (spec.gpus.empty()) {
    const int64_t n = std::clamp<int64_t>(count, 0, kMaxGpusPerHost);
    devices.all = n == kMaxGpusPerHost ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
    if (devices.all != 0) devices.numa_groups.push_back(devices.all);
    return devices;
  }
  std::map<int32_t, uint64_t> by_node;  // -1 (unknown) sorts first; moved last below
  bool has_memory = false;
  bool has_model = false;
  bool has_links = false;
  for (const GpuDevice& gpu : spec.gpus) {
    if (gpu.index < 0 || gpu.index >= kMaxGpusPerHost) continue;
    const uint64_t bit = uint64_t{1} << gpu.index;
    devices.all |= bit;
    by_node[gpu.numa < 0 ? -1 : gpu.numa] |= bit;
    has_memory = has_memory || gpu.memory_mb > 0;
    has_model = has_model || !gpu.model.empty();
    has_links = has_links || !gpu.nvlink.empty();
  }
  for (const auto& [node, mask] : by_node) {
    if (node >= 0) devices.numa_groups.push_back(mask);
  }
  if (auto unknown = by_node.find(-1); unknown != by_node.end()) {
    devices.numa_groups.push_back(unknown->second);
  }
  const size_t width = static_cast<size_t>(64 - __builtin_clzll(devices.all));
  if (has_memory) devices.memory_mb.assign(width, 0);
  if (has_model) devices.model.assign(width, "");
  if (has_links) devices.peers.assign(width, 0);
  for (const GpuDevice& gpu : spec.gpus) {
    if (gpu.index < 0 || gpu.index >= kMaxGpusPerHost) continue;
    const auto i = static_cast<size_t>(gpu.index);
    if (has_memory) devices.memory_mb[i] = gpu.memory_mb;
    if (has_model) devices.model[i] = gpu.model;
    for (int32_t peer : gpu.nvlink) {
      if (peer == gpu.index || peer < 0 || peer >= kMaxGpusPerHost) continue;
      const uint64_t peer_bit = uint64_t{1} << peer;
      if ((devices.all & peer_bit) == 0) continue;
      // Links are symmetric whichever side declared them.
      devices.peers[i] |= peer_bit;
      devices.peers[static_cast<size_t>(peer)] |= uint64_t{1} << gpu.index;
    }
  }
  return devices;
}

uint64_t LowestBits(uint64_t mask, int32_t n) {
  uint64_t picked = 0;
  for (int32_t i = 0; i < n && mask != 0; ++i) {
    const uint64_t bit = mask & (~mask + 1);
    picked |= bit;
    mask &= mask - 1;
  }
  return picked;
}

}  // namespace sluice::core
