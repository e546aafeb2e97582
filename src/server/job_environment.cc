#include "server/job_environment.h"

namespace sluice::server {

using nlohmann::json;

bool GlobMatches(std::string_view pattern, std::string_view name) {
  // Iterative match with one backtrack point per star (the usual greedy-star algorithm):
  // linear in practice, never recursive on the request's input.
  size_t p = 0;
  size_t n = 0;
  size_t star = std::string_view::npos;
  size_t resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool MatchesAny(const std::vector<std::string>& patterns, std::string_view name) {
  for (const std::string& pattern : patterns) {
    if (GlobMatches(pattern, name)) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> ApplyJobPolicy(const config::JobPolicy& policy, json& spec) {
  std::vector<std::string> removed;
  if (spec.contains("env") && spec["env"].is_object()) {
    json& env = spec["env"];
    for (auto it = env.begin(); it != env.end();) {
      const bool denied = MatchesAny(policy.env_deny, it.key()) ||
                          (!policy.env_allow.empty() && !MatchesAny(policy.env_allow, it.key()));
      if (denied) {
        removed.push_back(it.key());
        it = env.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (spec.value("output", "").empty()) {
    const std::string& pattern =
        spec.contains("array") ? policy.default_array_output : policy.default_output;
    const std::string cwd = spec.value("cwd", "");
    if (!pattern.empty()) {
      spec["output"] = pattern.front() == '/' || cwd.empty() ? pattern : cwd + "/" + pattern;
      // The agent falls back to discarding it when it cannot be created (agent/job_runner.h).
      spec["output_default"] = true;
    }
  }
  return removed;
}

}  // namespace sluice::server
