// The GPUs of a host entry of the cluster YAML (R-GPU-1; docs/design/gpu-plan.md §5), read
// into core::HostSpec::gpus. A host entry takes `gpus:` in one of three forms:
//
//   gpus: 4                 # devices 0..3, with the optional sibling keys
//   gpu_model: A100         #   the model of each (any text without quotes)
//   gpu_memory: 40G         #   the memory of each: MB, or a number with K, M, G or T (+ B)
//
//   gpus: auto              # the agent detects them (HostSpec::gpus_auto; no devices yet)
//
//   gpus:                   # one map per device; only `index` is required
//     - {index: 0, model: A100, memory: 40G, uuid: GPU-8a1c..., path: /dev/nvidia0,
//        numa: 0, nvlink: [1, 2, 3]}
//
// Checks, each a kInvalidArgument located at the offending key (Reader):
//   - the count is 0..kMaxGpusPerHost; indexes are unique and within 0..kMaxGpusPerHost-1;
//   - `nvlink` names other devices of the same host, each once; the relation is made
//     symmetric (0 listing 1 gives 1 the peer 0), and each list is sorted;
//   - `path` is absolute; `memory` is a non-negative size; `numa` a non-negative integer;
//   - `gpu_model` and `gpu_memory` go only with the count form (a list says it per device);
//   - `resources: {gpu: N}` beside `gpus:` must equal the number of devices, and is refused
//     with `gpus: auto` (the agent's count decides; a stale one would mislead the scheduler).
// After reading, resources["gpu"] is the number of devices (not with `auto`), so the count
// resource (`select[gpu>0]`, limits, `rusage[gpu=1]`) keeps working on these hosts.
//
// Thread-safety: pure functions of their arguments. yaml-cpp may throw; callers run them under
// ParseClusterConfig's try block.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "config/yaml_reader.h"
#include "core/model/config.h"

namespace sluice::config::yaml {

// Whether `key` is a host key read by ReadHostGpus (gpus, gpu_model, gpu_memory).
bool IsHostGpuKey(std::string_view key);

// Reads the GPU keys among a host entry's `entries` into `spec`.
// REQUIRES: every other key of the entry is already in `spec` (resources["gpu"] is compared
// with the devices). Without a `gpus:` key, `spec` is left as it is, apart from errors about
// a lone gpu_model or gpu_memory.
Status ReadHostGpus(const Reader& reader, const std::vector<Entry>& entries, core::HostSpec& spec);

// What one copy of `gpus` costs in the file-wide budget of expanded host settings
// (Reader::Charge): one per device and one per NVLink peer, so that a host range times a long
// device list cannot exhaust memory.
size_t GpuCost(const std::vector<core::GpuDevice>& gpus);

}  // namespace sluice::config::yaml
