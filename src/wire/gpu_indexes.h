// GPU sets on the wire and in stored allocations: a list of device indexes ([0, 2]) for the
// 64-bit masks the core uses (bit i: device i), so that what is stored or sent reads as
// what `nvidia-smi` and CUDA_VISIBLE_DEVICES show.
// Thread-safety: pure.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace sluice::wire {

// The indexes of the set bits, ascending.
nlohmann::json GpuIndexes(uint64_t mask);
// The mask of a list of indexes. Errors: kInvalidArgument for anything but an array of
// distinct whole numbers 0-63.
Result<uint64_t> GpuMaskOf(const nlohmann::json& indexes);

// A job's GPUs on one host as a launch or a step order carries them (R-GPU-3): `gpus`, its
// device indexes, `gpu_paths`, {"index": "/dev/..."} for every GPU of the host, and in shared
// mode `gpu_mem_mb`, the device memory reserved on each (others' jobs use the rest).
struct GpuBinding {
  std::vector<int32_t> gpus;
  std::map<int32_t, std::string> gpu_paths;
  int64_t mem_mb = 0;  // 0: the devices are the job's alone

  friend bool operator==(const GpuBinding&, const GpuBinding&) = default;
};
// Adds `gpus` and `gpu_paths` to `out` unless the host has no GPUs.
void EncodeGpuBinding(const GpuBinding& binding, nlohmann::json& out);
// Reads them from `entry` (both absent: none). Errors: kInvalidArgument naming `where` and
// the member: paths not absolute or under indexes outside 0-63, a GPU without a path.
Result<GpuBinding> DecodeGpuBinding(const nlohmann::json& entry, const std::string& where);

}  // namespace sluice::wire
