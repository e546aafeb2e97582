#include "agent/gpu_env.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstring>

namespace sluice::agent {
namespace {

std::string Joined(const std::vector<int32_t>& indexes) {
  std::string text;
  for (int32_t i : indexes) text += (text.empty() ? "" : ",") + std::to_string(i);
  return text;
}

}  // namespace

void AddGpuEnvironment(const wire::GpuBinding& binding, bool fenced,
                       std::map<std::string, std::string>& env) {
  if (binding.gpus.empty()) return;
  std::vector<int32_t> sorted = binding.gpus;
  std::sort(sorted.begin(), sorted.end());
  const std::string absolute = Joined(sorted);
  std::vector<int32_t> seen = sorted;
  if (fenced) {
    for (size_t i = 0; i < seen.size(); ++i) seen[i] = static_cast<int32_t>(i);
  }
  const std::string visible = Joined(seen);
  env["SLUICE_GPUS"] = absolute;
  env["SLURM_JOB_GPUS"] = absolute;
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                           "GPU_DEVICE_ORDINAL"}) {
    env[name] = visible;
  }
  if (binding.mem_mb > 0) env["SLUICE_GPU_MEM_MB"] = std::to_string(binding.mem_mb);
}

std::vector<std::string> DeniedGpuPaths(const std::vector<int32_t>& gpus,
                                        const std::map<int32_t, std::string>& paths) {
  std::vector<std::string> denied;
  for (const auto& [index, path] : paths) {
    if (std::find(gpus.begin(), gpus.end(), index) == gpus.end()) denied.push_back(path);
  }
  return denied;
}

Result<DeviceRule> DeviceRuleOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return Status(errno == ENOENT ? StatusCode::kNotFound : StatusCode::kInternal,
                  path + ": " + std::strerror(errno));
  }
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
    return InvalidArgument(path + ": not a device node");
  }
  return DeviceRule{.type = S_ISCHR(st.st_mode) ? 'c' : 'b',
                    .major = major(st.st_rdev),
                    .minor = minor(st.st_rdev)};
}

Result<std::vector<DeviceRule>> DeniedGpuRules(const std::vector<int32_t>& gpus,
                                               const std::map<int32_t, std::string>& paths) {
  std::vector<DeviceRule> rules;
  for (const std::string& path : DeniedGpuPaths(gpus, paths)) {
    Result<DeviceRule> rule = DeviceRuleOf(path);
    if (rule) {
      rules.push_back(*rule);
    } else if (rule.error().code() != StatusCode::kNotFound) {  // absent: nothing to open
      return rule.error();
    }
  }
  return rules;
}

}  // namespace sluice::agent
