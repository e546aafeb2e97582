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
    const int64_t total = std::max<int64_t>(estimate.waits_for_count,
                                            static_cast<int64_t>(estimate.waits_for.size()));
    if (total > static_cast<int64_t>(shown)) {
      text += " and " + std::to_string(total - static_cast<int64_t>(shown)) + " more";
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
  if (estimate.waits_for_count > static_cast<int64_t>(estimate.waits_for.size())) {
    out["waits_for_count"] = estimate.waits_for_count;  // the list is capped (forecast.h)
  }
}

}  // namespace sluice::wire
