#include "wire/reasons_json.h"

#include "base/array_ids.h"
#include "core/explain/hint.h"
#include "core/explain/host_detail.h"

namespace sluice::wire {

namespace {

// A time the reason may not know (kInfinite) is null on the wire.
nlohmann::ordered_json TimeOrNull(Instant time) {
  if (time == kInfinite) return nullptr;
  return time;
}

// The codes that say how much of a resource is wanted and how much is there.
void AddAmountFields(const core::ReasonDetail& detail, nlohmann::ordered_json& j) {
  switch (detail.code) {
    case core::ReasonCode::kNoResource:
      j["resource"] = detail.resource;
      j["needed"] = detail.needed;
      j["available"] = detail.available;
      j["hosts"] = detail.hosts;
      if (detail.one_host) j["one_host"] = true;
      if (!detail.same.empty()) j["same"] = detail.same;
      if (detail.per_host > 0) j["per_host"] = detail.per_host;
      if (!detail.devices.empty()) j["devices"] = detail.devices;
      if (!detail.scope.empty()) j["scope"] = detail.scope;
      break;
    case core::ReasonCode::kSharedResource:
      j["resource"] = detail.resource;
      j["needed"] = detail.needed;
      j["available"] = detail.available;
      break;
    case core::ReasonCode::kQueueRunLimit:
      j["resource"] = detail.resource.empty() ? "jobs" : detail.resource;
      j["limit"] = detail.needed;
      j["used"] = detail.available;
      break;
    default:
      break;
  }
}

// The codes of a configured limit that is full.
void AddLimitFields(const core::ReasonDetail& detail, nlohmann::ordered_json& j) {
  if (detail.code == core::ReasonCode::kArrayLimit) {
    j["scope"] = detail.scope;
    j["used"] = detail.used;
    j["max"] = detail.max;
    return;
  }
  if (!detail.limit.empty()) j["limit"] = detail.limit;
  if (!detail.scope.empty()) j["scope"] = detail.scope;
  j["resource"] = detail.resource.empty() ? "slots" : detail.resource;
  j["used"] = detail.used;
  j["max"] = detail.max;
  if (detail.hosts > 0) j["hosts"] = detail.hosts;
}

// An advance reservation's window: its end and its hosts, when the reason knows them.
void AddWindowFields(const core::ReasonDetail& detail, nlohmann::ordered_json& j) {
  if (detail.until != kInfinite) j["until"] = detail.until;
  if (!detail.host_names.empty()) j["host_names"] = detail.host_names;
}

}  // namespace

nlohmann::ordered_json ReasonDetailToJson(const core::ReasonDetail& detail) {
  nlohmann::ordered_json j;
  j["code"] = core::ToString(detail.code);
  switch (detail.code) {
    case core::ReasonCode::kNoResource:
    case core::ReasonCode::kSharedResource:
    case core::ReasonCode::kQueueRunLimit:
      AddAmountFields(detail, j);
      break;
    case core::ReasonCode::kLimit:
    case core::ReasonCode::kHostLimit:
    case core::ReasonCode::kUserLimit:
    case core::ReasonCode::kQueueCapacity:
    case core::ReasonCode::kArrayLimit:
      AddLimitFields(detail, j);
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
      j["time"] = TimeOrNull(detail.time);
      break;
    case core::ReasonCode::kBeginTime:
      j["time"] = detail.time;
      break;
    case core::ReasonCode::kDependency:
      j["condition"] = detail.condition;
      j["never"] = detail.never;
      break;
    case core::ReasonCode::kPreempting:
      if (detail.hosts > 0) j["hosts"] = detail.hosts;
      if (detail.used > 0) j["victims"] = detail.used;
      if (detail.time != kInfinite) j["time"] = detail.time;
      break;
    case core::ReasonCode::kFairshare:
      if (detail.job != kNoJob) j["job"] = detail.job;
      break;
    case core::ReasonCode::kQueueWindow:
      j["time"] = TimeOrNull(detail.time);
      break;
    case core::ReasonCode::kHostReserved:
      j["hosts"] = detail.hosts;
      j["scope"] = detail.scope;
      j["time"] = TimeOrNull(detail.time);
      AddWindowFields(detail, j);
      break;
    case core::ReasonCode::kReservationWait:
      j["scope"] = detail.scope;
      j["time"] = TimeOrNull(detail.time);
      AddWindowFields(detail, j);
      break;
    case core::ReasonCode::kReservationDenied:
      j["scope"] = detail.scope;
      break;
    case core::ReasonCode::kNewJob:
    case core::ReasonCode::kHeld:
    case core::ReasonCode::kQueueInactive:
    case core::ReasonCode::kDispatchFailed:
    case core::ReasonCode::kInternal:
      break;
  }
  return j;
}

nlohmann::ordered_json HostVerdictToJson(const core::HostVerdict& v,
                                         const core::ClusterState& state) {
  nlohmann::ordered_json j;
  j["host"] = state.topology().hosts()[v.host].spec.name;
  if (v.room) {
    j["room"] = v.available;
    return j;
  }
  j["code"] = core::ToString(v.code);
  if (v.code == core::ReasonCode::kNoResource) {
    j["resource"] = v.resource;
    if (v.resource != "slots") {
      j["needed"] = v.needed;
      j["available"] = v.available;
    }
  }
  return j;
}

namespace {

nlohmann::ordered_json CountsToJson(const std::map<core::ReasonCode, int64_t>& counts) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [code, n] : counts) j[std::string(core::ToString(code))] = n;
  return j;
}

nlohmann::ordered_json ReasonCountsToJson(const core::ReasonCounts& counts) {
  nlohmann::ordered_json j;
  j["jobs"] = counts.jobs;
  j["by_reason"] = CountsToJson(counts.by_main);
  j["with_reason"] = CountsToJson(counts.by_any);
  return j;
}

}  // namespace

nlohmann::ordered_json PendingJobToJson(const core::PendJob& pend, const core::ClusterState& state,
                                        const StartEstimate* estimate, bool per_host) {
  nlohmann::ordered_json j;
  j["job"] = ArrayIdOf(pend.job);
  if (IsArrayElement(pend.job)) j["index"] = ArrayIndexOf(pend.job);  // R-UX-3
  j["reason"] = core::ToString(pend.reasons.main);
  nlohmann::ordered_json details = nlohmann::ordered_json::array();
  for (const core::ReasonDetail& detail : pend.reasons.details) {
    details.push_back(ReasonDetailToJson(detail));
  }
  j["details"] = std::move(details);
  const core::Job* job = state.FindJob(pend.job);
  if (job == nullptr) return j;
  j["hint"] = core::Hint(*job, state, pend.reasons);
  if (estimate != nullptr) AddEstimateJson(*estimate, j);
  if (per_host) {
    nlohmann::ordered_json hosts = nlohmann::ordered_json::array();
    for (const core::HostVerdict& v : core::ExplainHosts(*job, state))
      hosts.push_back(HostVerdictToJson(v, state));
    j["hosts"] = std::move(hosts);
  }
  return j;
}

nlohmann::ordered_json SummaryToJson(const core::PendingSummary& summary) {
  nlohmann::ordered_json j = ReasonCountsToJson(summary.all);
  nlohmann::ordered_json queues = nlohmann::ordered_json::object();
  for (const auto& [name, counts] : summary.by_queue) queues[name] = ReasonCountsToJson(counts);
  j["queues"] = std::move(queues);
  return j;
}

nlohmann::json ReasonsJson(const std::optional<core::PendingReasons>& reasons,
                           const std::string& reason, const std::string& hint) {
  nlohmann::json j = {{"main", reason}, {"details", nlohmann::json::array()}};
  if (reasons) {
    j["main"] = core::ToString(reasons->main);
    for (const core::ReasonDetail& d : reasons->details) {
      j["details"].push_back(nlohmann::json(ReasonDetailToJson(d)));
    }
  }
  if (!hint.empty()) j["hint"] = hint;
  return j;
}

std::optional<core::ReasonCode> ReasonCodeFromString(std::string_view name) {
  for (core::ReasonCode code : core::kAllReasonCodes) {
    if (core::ToString(code) == name) return code;
  }
  return std::nullopt;
}

std::optional<core::ReasonDetail> ReasonDetailFromJson(const nlohmann::json& detail) {
  if (!detail.is_object() || !detail.contains("code") || !detail["code"].is_string()) {
    return std::nullopt;
  }
  std::optional<core::ReasonCode> code = ReasonCodeFromString(detail["code"].get<std::string>());
  if (!code) return std::nullopt;
  core::ReasonDetail out{.code = *code};
  const auto get_int = [&](const char* key, auto& field) {
    if (auto it = detail.find(key); it != detail.end() && it->is_number_integer()) {
      field = it->get<std::remove_reference_t<decltype(field)>>();
    }
  };
  const auto get_string = [&](const char* key, std::string& field) {
    if (auto it = detail.find(key); it != detail.end() && it->is_string())
      field = it->get<std::string>();
  };
  get_string("resource", out.resource);
  get_int("needed", out.needed);
  get_int("available", out.available);
  get_int("hosts", out.hosts);
  if (auto it = detail.find("one_host"); it != detail.end() && it->is_boolean()) {
    out.one_host = it->get<bool>();
  }
  get_string("same", out.same);
  get_int("per_host", out.per_host);
  get_string("devices", out.devices);
  get_int("job", out.job);
  get_int("time", out.time);  // null (never) keeps kInfinite
  get_string("limit", out.limit);
  get_string("scope", out.scope);
  get_int("until", out.until);
  get_string("host_names", out.host_names);
  get_int("used", out.used);
  get_int("max", out.max);
  get_string("condition", out.condition);
  if (auto it = detail.find("never"); it != detail.end() && it->is_boolean()) {
    out.never = it->get<bool>();
  }
  return out;
}

}  // namespace sluice::wire
