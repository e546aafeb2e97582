#include "core/admission/backfill_order.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
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
      // Sorts small keys, not the candidates themselves, then moves each candidate once:
      // the sort was the largest part of this policy's cost on long queues (HPC2N).
      // A factor is finite and >= 1, so its bits order as the factor does; inverted, they
      // sort the largest first. [first, last) is in queue order, so the index within it
      // breaks ties as the queue position does: two integer comparisons at most per pair.
      struct Key {
        uint64_t inverted_factor;
        uint64_t index;  // in [first, last)
      };
      const size_t n = static_cast<size_t>(last - first);
      std::vector<Key> keys;
      keys.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        const uint64_t bits = std::bit_cast<uint64_t>(ExpansionFactor(first[i], now));
        keys.push_back(Key{~bits, i});
      }
      std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
        if (a.inverted_factor != b.inverted_factor) return a.inverted_factor < b.inverted_factor;
        return a.index < b.index;
      });
      std::vector<BackfillCandidate> sorted;
      sorted.reserve(n);
      for (const Key& key : keys) sorted.push_back(first[key.index]);
      std::copy(sorted.begin(), sorted.end(), first);
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
  // Aged candidates first, in queue order (stable_partition keeps the collected order);
  // without any aged one (the aging knobs are off by default) nothing moves.
  const auto aged = [](const BackfillCandidate& c) { return c.aged; };
  auto young = std::any_of(candidates.begin(), candidates.end(), aged)
                   ? std::stable_partition(candidates.begin(), candidates.end(), aged)
                   : candidates.begin();
  SortInto(young, candidates.end(), order, now);
}

}  // namespace sluice::core
