#include "core/admission/backfill_order.h"

#include <algorithm>

namespace sluice::core {
namespace {

double ExpansionFactor(const BackfillCandidate& c, Instant now) {
  if (c.predicted == kInfinite) return 1.0;
  const double p = static_cast<double>(std::max<Duration>(c.predicted, 1));
  const double wait = static_cast<double>(std::max<Duration>(now - c.job->spec.submit_time, 0));
  return (wait + p) / p;
}

}  // namespace

void SortCandidates(std::vector<BackfillCandidate>& candidates, BackfillOrder order, Instant now) {
  switch (order) {
    case BackfillOrder::kQueue:
      return;  // collected in queue order already
    case BackfillOrder::kShortest:
      std::sort(candidates.begin(), candidates.end(),
                [](const BackfillCandidate& a, const BackfillCandidate& b) {
                  if (a.predicted != b.predicted) return a.predicted < b.predicted;
                  return a.position < b.position;
                });
      return;
    case BackfillOrder::kExpansion: {
      std::vector<std::pair<double, BackfillCandidate>> keyed;
      keyed.reserve(candidates.size());
      for (const BackfillCandidate& c : candidates) keyed.emplace_back(ExpansionFactor(c, now), c);
      std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second.position < b.second.position;
      });
      for (size_t i = 0; i < keyed.size(); ++i) candidates[i] = keyed[i].second;
      return;
    }
  }
}

}  // namespace sluice::core
