// A job's GPUs on this host (R-GPU-3): the variables that tell CUDA, ROCm and MPI launchers
// which devices are its own, and the device nodes its cgroup must refuse.
//
// SLUICE_GPUS and SLURM_JOB_GPUS hold the host's device indexes ("0,2"). CUDA_VISIBLE_DEVICES,
// ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL hold what the job's
// runtime will see: where the cgroup fences the other devices off, the runtime enumerates
// only the job's and numbers them from 0 (so "0,1"), as Slurm does under ConstrainDevices;
// without a fence, the host's indexes. In shared mode SLUICE_GPU_MEM_MB holds the device
// memory the job reserved on each (nothing enforces it on the device: the job keeps to it).
// Thread-safety: pure functions, apart from DeviceRuleOf's stat().
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/cgroup.h"
#include "base/status.h"
#include "wire/gpu_indexes.h"

namespace sluice::agent {

void AddGpuEnvironment(const wire::GpuBinding& binding, bool fenced,
                       std::map<std::string, std::string>& env);

// The device nodes of the host's GPUs that are not the job's, in index order.
std::vector<std::string> DeniedGpuPaths(const std::vector<int32_t>& gpus,
                                        const std::map<int32_t, std::string>& paths);

// The cgroup rule naming the device node at `path`. Errors: kNotFound when it does not exist,
// kInvalidArgument when it is not a character or block device.
Result<DeviceRule> DeviceRuleOf(const std::string& path);

// The rules refusing the job the device nodes of the host's GPUs that are not its own
// (DeniedGpuPaths, DeviceRuleOf); a node that does not exist needs none. Errors: the first
// node that is not a device, or cannot be read.
Result<std::vector<DeviceRule>> DeniedGpuRules(const std::vector<int32_t>& gpus,
                                               const std::map<int32_t, std::string>& paths);

}  // namespace sluice::agent
