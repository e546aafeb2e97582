// HostDevices: a host's GPUs compiled for allocation (R-GPU-1, R-GPU-3).
//
// Device sets are 64-bit masks, bit i for the device of index i (kMaxGpusPerHost): a fit test
// or a pick is a few word operations, whatever the host's size. A host configured with a
// `gpu` count and no device list gets devices 0..N-1, so every GPU a job holds has an index.
// Representation: `peers[i]` (NVLink) is symmetric and never holds i; `numa_groups` partitions
// `all` (devices of unknown NUMA node form one group of their own).
// Thread-safety: value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/config.h"

namespace sluice::core {

struct HostDevices {
  uint64_t all = 0;                   // every device of the host
  std::vector<uint64_t> peers;        // by index: its NVLink peers; empty when none has any
  std::vector<uint64_t> numa_groups;  // devices by NUMA node, ascending node; unknown last
  std::vector<int64_t> memory_mb;     // by index; empty when no device declares memory
  std::vector<std::string> model;     // by index; empty when no device declares a model

  int32_t count() const { return __builtin_popcountll(all); }
  int64_t MemoryOf(int32_t index) const {  // MB; 0 when not declared
    return static_cast<size_t>(index) < memory_mb.size() ? memory_mb[static_cast<size_t>(index)]
                                                          : 0;
  }
  uint64_t PeersOf(int32_t index) const {
    return static_cast<size_t>(index) < peers.size() ? peers[static_cast<size_t>(index)] : 0;
  }
  friend bool operator==(const HostDevices&, const HostDevices&) = default;
};

// The devices of `spec`: its `gpus` list, or else `count` anonymous ones (the `gpu` resource),
// at most kMaxGpusPerHost. Peers naming a device the host lacks are dropped.
HostDevices CompileDevices(const HostSpec& spec, int64_t count);

// The lowest set bits of `mask`, `n` of them (all of them when it has fewer).
uint64_t LowestBits(uint64_t mask, int32_t n);

}  // namespace sluice::core
