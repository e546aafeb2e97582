// The JSON of pending reasons (R-PR-1, R-PR-2; docs/reasons-json.md), shared by the server's
// job objects, the simulator's `--pending-at` report and the CLI:
//   {"job":3,"reason":"PRIORITY_WAIT","details":[{"code":"PRIORITY_WAIT","job":1}],
//    "hint":"waits for job 1 (queue head) to start first","estimated_start":600}
// A detail carries only the fields its code uses. Keys keep the order written here
// (ordered_json), so the text is stable byte for byte (goldens).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/explain/host_detail.h"
#include "core/explain/summary.h"
#include "core/model/cluster_state.h"
#include "core/model/decision.h"
#include "core/reasons/reason.h"
#include "wire/estimate_json.h"

namespace sluice::wire {

nlohmann::ordered_json ReasonDetailToJson(const core::ReasonDetail& detail);
// The inverse, for clients: unknown or missing codes yield nullopt, absent fields defaults.
std::optional<core::ReasonDetail> ReasonDetailFromJson(const nlohmann::json& detail);
// "NO_RESOURCE" -> kNoResource; nullopt for a name that is no ReasonCode.
std::optional<core::ReasonCode> ReasonCodeFromString(std::string_view name);

// One host's verdict for a waiting job: {"host", "room"} or {"host", "code", "resource",
// "needed", "available"} (per-host detail, R-PR-2).
nlohmann::ordered_json HostVerdictToJson(const core::HostVerdict& v,
                                         const core::ClusterState& state);

// One pending job: job, reason, details, hint; estimated_start (and why unknown) when
// `estimate` is given; hosts (per-host verdicts) when `per_host`. A job `state` does not know
// gets job, reason and details only.
nlohmann::ordered_json PendingJobToJson(const core::PendJob& pend, const core::ClusterState& state,
                                        const StartEstimate* estimate, bool per_host);

// {"jobs": 12, "by_reason": {"NO_RESOURCE": 8, ...}, "with_reason": {...},
//  "queues": {"normal": {"jobs": 10, "by_reason": {...}, "with_reason": {...}}}}
nlohmann::ordered_json SummaryToJson(const core::PendingSummary& summary);

// The `reasons` member of a waiting job in the server's job objects: {"main", "details",
// "hint"}. `reasons` absent: main is `reason` and details are empty (not explained yet).
// No `hint` when it is empty.
nlohmann::json ReasonsJson(const std::optional<core::PendingReasons>& reasons,
                           const std::string& reason, const std::string& hint = "");

}  // namespace sluice::wire
