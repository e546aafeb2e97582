// An estimated start time of a pending job (issue 6, R-PR-2) as the API shows it: the value
// the estimator (core/driver/forecast.h) produces, its one-line text and its JSON members
// (docs/reasons-json.md).
// Thread-safety: value type and pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/time.h"
#include "core/driver/forecast.h"
#include "core/reasons/reason.h"

namespace sluice::wire {

using StartEstimate = core::StartEstimate;  // core/driver/forecast.h

// "t=1200" or "unknown (waits for jobs without a run limit: 4, 9)" (at most 5 ids shown,
// then "and N more").
std::string EstimateText(const StartEstimate& estimate);
// {"estimated_start": 1200} or {"estimated_start": null, "unknown_because": "...",
// "reason_at_end": "...", "waits_for": [4, 9]} — the members merged into a pending job's
// JSON object.
void AddEstimateJson(const StartEstimate& estimate, nlohmann::ordered_json& out);

}  // namespace sluice::wire
