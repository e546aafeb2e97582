#include "wire/estimate_json.h"

#include <algorithm>

namespace sluice::wire {

std::string EstimateText(const StartEstimate& estimate) {
  if (estimate.start) {
    return "t=" + std::to_string(*estimate.start) +
           (estimate.predicted ? " (from predicted runtimes)" : "");
  }
  std::string text = "unknown (" + estimate.unknown_because;
  if (!estimate.waits_for.empty()) {
    text += ": ";
    const size_t shown = std::min<size_t>(estimate.waits_for.size(), 5);
    for (size_t i = 0; i < shown; ++i) {
      text += (i > 0 ? ", " : "") + std::to_string(estimate.waits_for[i]);
    }
    if (estimate.waits_for.size() > shown) {
      text += " and " + std::to_string(estimate.waits_for.size() - shown) + " more";
    }
  }
  return text + ")";
}

void AddEstimateJson(const StartEstimate& estimate, nlohmann::ordered_json& out) {
  if (estimate.start) {
    out["estimated_start"] = *estimate.start;
    if (estimate.predicted) out["estimated_from"] = "predicted runtimes";
    return;
  }
  out["estimated_start"] = nullptr;
  out["unknown_because"] = estimate.unknown_because;
  if (estimate.reason_at_end) out["reason_at_end"] = core::ToString(*estimate.reason_at_end);
  if (!estimate.waits_for.empty()) out["waits_for"] = estimate.waits_for;
}

}  // namespace sluice::wire
