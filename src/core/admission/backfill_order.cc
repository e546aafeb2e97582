#include "core/admission/backfill_order.h"

#include <algorithm>
#include <utility>

namespace sluice::core {
namespace {

double ExpansionFactor(const BackfillCandidate& c, Instant now) {
  if (c.predicted == kInfinite) return 1.0;
  const double p = static_cast<double>(std::max<Duration>(c.predicted, 1));
  const double wait = static_cast<double>(std::max<Duration>(now - c.job->spec.submit_time, 0));
  return (wait + p) / p;
}

using Iterator = std::vector<BackfillCandidate>::iterator;

// Sorts [first, last), collected in queue order, into `order`.
void SortInto(Iterator first, Iterator last, BackfillOrder order, Instant now) {
  switch (order) {
    case BackfillOrder::kQueue:
      return;
    case BackfillOrder::kShortest:
      std::sort(first, last, [](const BackfillCandidate& a, const BackfillCandidate& b) {
        if (a.predicted != b.predicted) return a.predicted < b.predicted;
        return a.position < b.position;
      });
      return;
    case BackfillOrder::kExpansion: {
      std::vector<std::pair<double, BackfillCandidate>> keyed;
      keyed.reserve(static_cast<size_t>(last - first));
      for (auto c = first; c != last; ++c) keyed.emplace_back(ExpansionFactor(*c, now), *c);
      std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second.position < b.second.position;
      });
      for (const auto& [factor, c] : keyed) *first++ = c;
      return;
    }
  }
}

}  // namespace

bool IsAged(const Job& job, Duration waited, const PredictiveKnobs& knobs) {
  if (knobs.age_after > 0 && waited >= knobs.age_after) return true;
  if (knobs.age_limits <= 0 || !job.spec.run_limit) return false;
  // k x L saturates instead of overflowing: a huge limit then never ages.
  const Duration limit = std::max<Duration>(*job.spec.run_limit, 0);
  if (limit > kInfinite / knobs.age_limits) return false;
  return waited >= knobs.age_limits * limit;
}

void SortCandidates(std::vector<BackfillCandidate>& candidates, BackfillOrder order, Instant now) {
  // Aged candidates first, in queue order (stable_partition keeps the collected order).
  auto young = std::stable_partition(candidates.begin(), candidates.end(),
                                     [](const BackfillCandidate& c) { return c.aged; });
  SortInto(young, candidates.end(), order, now);
}

}  // namespace sluice::core
