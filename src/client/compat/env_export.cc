#include "client/compat/env_export.h"

#include <vector>

namespace sluice::client::compat {
namespace {

bool IsShellName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_';
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> items;
  while (true) {
    const size_t comma = text.find(',');
    items.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return items;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

Environment EnvironmentOf(std::span<const std::string> entries) {
  Environment env;
  for (const std::string& entry : entries) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

Result<Environment> ResolveSlurmExport(std::string_view spec, const Environment& caller) {
  if (spec.empty() || spec == "ALL") return caller;
  Environment env;
  for (const auto& [name, value] : caller) {
    if (name.starts_with("SLURM_")) env[name] = value;
  }
  if (spec == "NONE") return env;
  for (std::string_view item : SplitCommas(spec)) {
    if (item == "ALL") {
      env.insert(caller.begin(), caller.end());  // listed values win, in any order
      continue;
    }
    if (item == "NONE") {
      return InvalidArgument("--export=" + std::string(spec) +
                             ": NONE cannot be combined with variables");
    }
    const size_t eq = item.find('=');
    const std::string name(item.substr(0, eq));
    if (!IsShellName(name)) {
      return InvalidArgument("--export=" + std::string(spec) + ": '" + std::string(item) +
                             "' is not NAME or NAME=VALUE");
    }
    if (eq != std::string_view::npos) {
      env[name] = std::string(item.substr(eq + 1));
    } else if (auto it = caller.find(name); it != caller.end()) {
      env[name] = it->second;
    }
  }
  return env;
}

}  // namespace sluice::client::compat
