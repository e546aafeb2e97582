// The `--pending-at T` report (R-SIM-4, R-PR-2): every pending job with its reasons, as
// `sluice jobs -p` prints them, or as JSON lines
//   {"job":3,"reason":"PRIORITY_WAIT","details":[{"code":"PRIORITY_WAIT","job":1}]}
// The JSON shape of a reason detail is what the server API returns (docs/design).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cycle/decision.h"
#include "core/model/cluster_state.h"
#include "core/reasons/render.h"

namespace sluice::sim {

// A detail carries only the fields its code uses.
nlohmann::ordered_json ReasonDetailToJson(const core::ReasonDetail& detail);

std::string PendingReportText(const std::vector<core::PendJob>& pending,
                              const core::ClusterState& state, Instant at);
std::string PendingReportJsonLines(const std::vector<core::PendJob>& pending);

}  // namespace sluice::sim
