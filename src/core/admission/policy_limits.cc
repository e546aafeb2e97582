#include "core/admission/policy_limits.h"

#include <cmath>

#include "core/model/limit_usage.h"

namespace sluice::core {
std::optional<std::string> ExceedsPolicyLimits(const Job& job, const ClusterState& state) {
  const Queue& queue = state.topology().queues()[job.queue];
  const int64_t slots = job.min_slots;
  if (queue.spec.slot_limit && slots > *queue.spec.slot_limit) {
    return "asks " + std::to_string(slots) + " slots; queue '" + queue.spec.name +
           "' allows at most " + std::to_string(*queue.spec.slot_limit) + " (slot_limit)";
  }
  const double max_slots =
      queue.spec.max_capacity / 100.0 * static_cast<double>(state.topology().total_slots());
  if (queue.spec.max_capacity < 100 && static_cast<double>(slots) > max_slots + 1e-9) {
    return "asks " + std::to_string(slots) + " slots; queue '" + queue.spec.name +
           "' may use at most " +
           std::to_string(static_cast<int64_t>(std::floor(max_slots + 1e-9))) + " (max_capacity " +
           std::to_string(queue.spec.max_capacity) + "%)";
  }
  const LimitUsage& usage = state.usage().limits();
  for (const CompiledLimit& compiled : usage.limits()) {
    if (compiled.host_scoped() ||
        !usage.Applies(compiled, job.spec.user, queue.spec.name, job.spec.project)) {
      continue;
    }
    const LimitSpec& limit = compiled.spec;
    if (limit.slots && slots > *limit.slots) {
      return "asks " + std::to_string(slots) + " slots; limit '" + limit.name + "' allows " +
             std::to_string(*limit.slots);
    }
    if (limit.jobs && *limit.jobs < 1) {
      return "limit '" + limit.name + "' allows no job";
    }
    for (const auto& [resource, max] : limit.resources) {
      const int64_t needed =
          LimitDemand(job, resource, state.topology().FindSharedResource(resource).has_value());
      if (needed > max) {
        return "asks " + resource + "=" + std::to_string(needed) + "; limit '" + limit.name +
               "' allows " + std::to_string(max);
      }
    }
  }
  return std::nullopt;
}

}  // namespace sluice::core
