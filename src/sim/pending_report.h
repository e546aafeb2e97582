// The `--pending-at T` report (R-SIM-4, R-PR-2): every pending job with its reasons, as
// `sluice jobs -p` prints them, or as JSON lines
//   {"job":3,"reason":"PRIORITY_WAIT","details":[{"code":"PRIORITY_WAIT","job":1}],
//    "hint":"waits for job 1 (queue head) to start first","estimated_start":600}
// and, on request, per-host detail (`-p2`) or a cluster-wide summary (`-psum`). The JSON
// shape is what the server API returns (wire/reasons_json.h, docs/reasons-json.md).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/driver/forecast.h"
#include "core/explain/render.h"
#include "core/explain/summary.h"
#include "core/model/cluster_state.h"
#include "core/model/decision.h"
#include "wire/reasons_json.h"

namespace sluice::sim {

struct PendingReportOptions {
  bool per_host = false;  // per-host detail (`-p2`)
  // Estimated starts by job (core::EstimateStarts); null: none shown.
  const std::map<JobId, core::StartEstimate>* estimates = nullptr;
};

std::string PendingReportText(const std::vector<core::PendJob>& pending,
                              const core::ClusterState& state, Instant at,
                              const PendingReportOptions& options = {});
std::string PendingReportJsonLines(const std::vector<core::PendJob>& pending,
                                   const core::ClusterState& state,
                                   const PendingReportOptions& options = {});
// The summary alone: text, or one JSON object on one line.
std::string PendingSummaryText(const std::vector<core::PendJob>& pending,
                               const core::ClusterState& state, Instant at);
std::string PendingSummaryJson(const std::vector<core::PendJob>& pending,
                               const core::ClusterState& state);

}  // namespace sluice::sim
