// The GPUs of a host as JSON: what an agent detected and sends when it registers (GpuReport),
// and the device lists the controller stores for hosts whose devices came from their agents.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/model/config.h"

namespace sluice::wire {

// How an agent looked for its host's GPUs (agent/gpu_detect.h). Wire names: "nvidia-smi",
// "none" (no nvidia-smi on its PATH), "failed" (it ran and failed, or hung and was killed).
enum class GpuProbe { kNvidiaSmi, kNoNvidiaSmi, kFailed };
std::string_view ToString(GpuProbe probe);

// What the agent detected of its host's GPUs (R-GPU-1), sent when it registers:
// "gpus": {"probe", "devices": [{"index", "model", "memory_mb", "uuid", "path", "numa",
// "nvlink"}], "error"}. Unknown device values are left out (as GpuDevice's defaults).
// Decoded: at most kMaxGpusPerHost devices with unique indexes 0-63, sorted by index; models
// of at most 64 characters without quotes or control characters (a `gmodel=` can quote them);
// absolute paths; numa >= -1; NVLink peers among the devices, made symmetric and sorted;
// devices only with kNvidiaSmi; an error of at most 1024 characters.
struct GpuReport {
  GpuProbe probe = GpuProbe::kNoNvidiaSmi;
  std::vector<core::GpuDevice> devices;  // kNvidiaSmi: what it listed (maybe none)
  std::string error;                     // kFailed: why
  bool operator==(const GpuReport&) const = default;
};

nlohmann::json EncodeGpuReport(const GpuReport& report);
// Errors: kInvalidArgument naming the field, e.g. `gpus.devices[1].index: GPU 0 listed twice`.
Result<GpuReport> DecodeGpuReport(const nlohmann::json& gpus);

// A device list as GpuReport's "devices" holds it, checked the same way; `where` names it in
// errors.
nlohmann::json EncodeGpuDevices(const std::vector<core::GpuDevice>& gpus);
Result<std::vector<core::GpuDevice>> DecodeGpuDevices(const nlohmann::json& list,
                                                      const std::string& where);

}  // namespace sluice::wire
