#include "sim/pending_report.h"

namespace sluice::sim {

nlohmann::ordered_json ReasonDetailToJson(const core::ReasonDetail& detail) {
  nlohmann::ordered_json j;
  j["code"] = core::ToString(detail.code);
  switch (detail.code) {
    case core::ReasonCode::kNoResource:
      j["resource"] = detail.resource;
      j["needed"] = detail.needed;
      j["available"] = detail.available;
      j["hosts"] = detail.hosts;
      if (detail.one_host) j["one_host"] = true;
      if (!detail.same.empty()) j["same"] = detail.same;
      if (detail.per_host > 0) j["per_host"] = detail.per_host;
      break;
    case core::ReasonCode::kSharedResource:
      j["resource"] = detail.resource;
      j["needed"] = detail.needed;
      j["available"] = detail.available;
      break;
    case core::ReasonCode::kNoMatch:
    case core::ReasonCode::kExclusive:
    case core::ReasonCode::kHostClosed:
    case core::ReasonCode::kHostUnavail:
      j["hosts"] = detail.hosts;
      break;
    case core::ReasonCode::kPriorityWait:
      j["job"] = detail.job;
      break;
    case core::ReasonCode::kGated:
      j["job"] = detail.job;
      j["time"] = detail.time;
      if (detail.hosts > 0) j["hosts"] = detail.hosts;
      break;
    case core::ReasonCode::kReserved:
      j["job"] = detail.job;
      if (detail.time == kInfinite) {
        j["time"] = nullptr;
      } else {
        j["time"] = detail.time;
      }
      break;
    case core::ReasonCode::kBeginTime:
      j["time"] = detail.time;
      break;
    case core::ReasonCode::kQueueRunLimit:
      j["resource"] = detail.resource.empty() ? "jobs" : detail.resource;
      j["limit"] = detail.needed;
      j["used"] = detail.available;
      break;
    case core::ReasonCode::kLimit:
    case core::ReasonCode::kHostLimit:
    case core::ReasonCode::kUserLimit:
    case core::ReasonCode::kQueueCapacity:
      if (!detail.limit.empty()) j["limit"] = detail.limit;
      if (!detail.scope.empty()) j["scope"] = detail.scope;
      j["resource"] = detail.resource.empty() ? "slots" : detail.resource;
      j["used"] = detail.used;
      j["max"] = detail.max;
      if (detail.hosts > 0) j["hosts"] = detail.hosts;
      break;
    case core::ReasonCode::kDependency:
      j["condition"] = detail.condition;
      j["never"] = detail.never;
      break;
    case core::ReasonCode::kQueueWindow:
    case core::ReasonCode::kPreempting:
      if (detail.time == kInfinite) {
        j["time"] = nullptr;
      } else {
        j["time"] = detail.time;
      }
      break;
    case core::ReasonCode::kNewJob:
    case core::ReasonCode::kHeld:
    case core::ReasonCode::kQueueInactive:
    case core::ReasonCode::kFairshare:
    case core::ReasonCode::kDispatchFailed:
    case core::ReasonCode::kInternal:
      break;
  }
  return j;
}

std::string PendingReportText(const std::vector<core::PendJob>& pending,
                              const core::ClusterState& state, Instant at) {
  std::string out = std::to_string(pending.size()) + " pending " +
                    (pending.size() == 1 ? "job" : "jobs") + " after the cycle at t=" +
                    std::to_string(at) + "\n";
  for (const core::PendJob& pend : pending) {
    const core::Job* job = state.FindJob(pend.job);
    if (job == nullptr) continue;
    out += "\n" + core::RenderPendingJob(*job, state, pend.reasons);
  }
  return out;
}

std::string PendingReportJsonLines(const std::vector<core::PendJob>& pending) {
  std::string out;
  for (const core::PendJob& pend : pending) {
    nlohmann::ordered_json j;
    j["job"] = pend.job;
    j["reason"] = core::ToString(pend.reasons.main);
    nlohmann::ordered_json details = nlohmann::ordered_json::array();
    for (const core::ReasonDetail& detail : pend.reasons.details) {
      details.push_back(ReasonDetailToJson(detail));
    }
    j["details"] = std::move(details);
    out += j.dump() + "\n";
  }
  return out;
}

}  // namespace sluice::sim
