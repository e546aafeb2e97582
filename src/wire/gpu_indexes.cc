#include "wire/gpu_indexes.h"

#include <string>

namespace sluice::wire {

nlohmann::json GpuIndexes(uint64_t mask) {
  nlohmann::json list = nlohmann::json::array();
  for (; mask != 0; mask &= mask - 1) list.push_back(__builtin_ctzll(mask));
  return list;
}

Result<uint64_t> GpuMaskOf(const nlohmann::json& indexes) {
  if (!indexes.is_array()) {
    return InvalidArgument("expected a list of GPU indexes, got " + indexes.dump());
  }
  uint64_t mask = 0;
  for (const nlohmann::json& index : indexes) {
    if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() > 63) {
      return InvalidArgument("expected GPU indexes 0-63, got " + index.dump());
    }
    const uint64_t bit = uint64_t{1} << index.get<int64_t>();
    if ((mask & bit) != 0) return InvalidArgument("GPU index " + index.dump() + " listed twice");
    mask |= bit;
  }
  return mask;
}

void EncodeGpuBinding(const GpuBinding& binding, nlohmann::json& out) {
  if (binding.gpu_paths.empty()) return;
  nlohmann::json paths = nlohmann::json::object();
  for (const auto& [index, path] : binding.gpu_paths) paths[std::to_string(index)] = path;
  out["gpu_paths"] = std::move(paths);
  out["gpus"] = binding.gpus;
  if (binding.mem_mb > 0) out["gpu_mem_mb"] = binding.mem_mb;
}

Result<GpuBinding> DecodeGpuBinding(const nlohmann::json& entry, const std::string& where) {
  GpuBinding binding;
  if (!entry.is_object()) return binding;
  if (auto paths = entry.find("gpu_paths"); paths != entry.end() && !paths->is_null()) {
    if (!paths->is_object()) {
      return InvalidArgument(where + ".gpu_paths: expected an object index -> path");
    }
    for (auto it = paths->begin(); it != paths->end(); ++it) {
      const std::string& key = it.key();
      int32_t index = -1;
      if (!key.empty() && key.size() <= 2 &&
          key.find_first_not_of("0123456789") == std::string::npos) {
        index = std::stoi(key);
      }
      if (index < 0 || index > 63 || !it->is_string() || !it->get<std::string>().starts_with("/")) {
        return InvalidArgument(where + ".gpu_paths." + key +
                               ": expected an absolute path under an index 0-63");
      }
      binding.gpu_paths[index] = it->get<std::string>();
    }
  }
  if (auto gpus = entry.find("gpus"); gpus != entry.end() && !gpus->is_null()) {
    if (!gpus->is_array()) return InvalidArgument(where + ".gpus: expected an array of indexes");
    for (const nlohmann::json& gpu : *gpus) {
      if (!gpu.is_number_integer() || !binding.gpu_paths.contains(gpu.get<int32_t>())) {
        return InvalidArgument(where + ".gpus: expected indexes listed in gpu_paths, got " +
                               gpu.dump());
      }
      binding.gpus.push_back(gpu.get<int32_t>());
    }
  }
  if (auto mem = entry.find("gpu_mem_mb"); mem != entry.end() && !mem->is_null()) {
    if (!mem->is_number_integer() || mem->get<int64_t>() <= 0 || binding.gpus.empty()) {
      return InvalidArgument(where + ".gpu_mem_mb: expected a positive integer beside gpus, got " +
                             mem->dump());
    }
    binding.mem_mb = mem->get<int64_t>();
  }
  return binding;
}

}  // namespace sluice::wire
