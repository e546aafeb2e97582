#include "agent/instance_name.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>

namespace sluice::agent {

std::string AgentInstanceName(const std::string& host, const std::string& state_dir) {
  std::error_code error;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(state_dir, error);
  const std::string key = error ? state_dir : canonical.string();
  uint32_t hash = 2166136261u;  // FNV-1a: stable across builds and machines
  for (unsigned char c : key) hash = (hash ^ c) * 16777619u;
  char digits[9];
  std::snprintf(digits, sizeof digits, "%08x", hash);
  return host + "-" + digits;
}

}  // namespace sluice::agent
