#include "agent/cpu_binding.h"

#include <algorithm>
#include <numeric>

namespace sluice::agent {

CpuBinder::CpuBinder(std::vector<LogicalCpu> cpus, std::map<int32_t, int32_t> gpu_numa,
                     std::set<int32_t> allowed_mems)
    : gpu_numa_(std::move(gpu_numa)), allowed_mems_(std::move(allowed_mems)) {
  std::map<std::pair<int32_t, int32_t>, Core> by_core;  // (socket, core id), sorted
  for (const LogicalCpu& cpu : cpus) {
    Core& core = by_core[{cpu.socket, cpu.core}];
    core.socket = cpu.socket;
    core.numa = cpu.numa;
    core.cpus.insert(cpu.cpu);
  }
  for (auto& [key, core] : by_core) cores_.push_back(std::move(core));
}

int32_t CpuBinder::free_cores() const {
  return static_cast<int32_t>(
      std::count_if(cores_.begin(), cores_.end(), [](const Core& c) { return c.holders == 0; }));
}

const CpuGrant& CpuBinder::Bind(int64_t job, int32_t slots, const std::vector<int32_t>& gpus) {
  if (auto it = grants_.find(job); it != grants_.end()) return it->second;
  std::set<int32_t> gpu_numa;  // the nodes of its GPUs, where known
  for (int32_t gpu : gpus) {
    auto it = gpu_numa_.find(gpu);
    if (it != gpu_numa_.end() && it->second >= 0) gpu_numa.insert(it->second);
  }
  const auto want = static_cast<size_t>(std::max(slots, 1));
  std::map<int32_t, int32_t> taken_on_socket;
  for (const Core& core : cores_) taken_on_socket[core.socket] += core.holders > 0 ? 1 : 0;
  std::vector<size_t> order(cores_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Free cores before shared ones; then the GPUs' nodes; then the fullest socket; then number
  // (order's own, stable_sort keeps it).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Core& x = cores_[a];
    const Core& y = cores_[b];
    if (x.holders != y.holders) return x.holders < y.holders;
    const bool x_near = gpu_numa.contains(x.numa);
    const bool y_near = gpu_numa.contains(y.numa);
    if (x_near != y_near) return x_near;
    return taken_on_socket[x.socket] > taken_on_socket[y.socket];
  });
  order.resize(std::min(want, order.size()));
  CpuGrant grant;
  for (size_t index : order) {
    Core& core = cores_[index];
    grant.shared = grant.shared || core.holders > 0;
    core.holders += 1;
    grant.cpus.insert(core.cpus.begin(), core.cpus.end());
    if (allowed_mems_.empty() || allowed_mems_.contains(core.numa)) grant.mems.insert(core.numa);
  }
  if (grant.mems.empty()) grant.mems = allowed_mems_;
  bound_[job] = std::move(order);
  return grants_[job] = std::move(grant);
}

void CpuBinder::Release(int64_t job) {
  auto it = bound_.find(job);
  if (it == bound_.end()) return;
  for (size_t index : it->second) cores_[index].holders -= 1;
  bound_.erase(it);
  grants_.erase(job);
}

}  // namespace sluice::agent
