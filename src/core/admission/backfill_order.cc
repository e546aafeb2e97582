#include "core/admission/backfill_order.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstddef>
#include <utility>

namespace sluice::core {
namespace {

double ExpansionFactor(const BackfillCandidate& c, Instant now) {
  if (c.predicted == kInfinite) return 1.0;
  const double p = static_cast<double>(std::max<Duration>(c.predicted, 1));
  const double wait = static_cast<double>(std::max<Duration>(now - c.job->spec.submit_time, 0));
  return (wait + p) / p;
}

// Expansion keys: a factor is finite and >= 1, so its bits order as the factor does;
// inverted, they sort the largest first. The young candidates are in queue order, so the
// index among them breaks ties as the queue position does: two integer comparisons at most.
bool KeyBefore(const BackfillSequence::Key& a, const BackfillSequence::Key& b) {
  if (a.inverted_factor != b.inverted_factor) return a.inverted_factor < b.inverted_factor;
  return a.index < b.index;
}
bool KeyAfter(const BackfillSequence::Key& a, const BackfillSequence::Key& b) {
  return KeyBefore(b, a);
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

BackfillSequence::BackfillSequence(std::vector<BackfillCandidate> candidates,
                                   BackfillOrder order, Instant now)
    : candidates_(std::move(candidates)) {
  // Aged candidates first, in queue order (stable_partition keeps the collected order);
  // without any aged one (the aging knobs are off by default) nothing moves.
  const auto aged = [](const BackfillCandidate& c) { return c.aged; };
  const auto young = std::any_of(candidates_.begin(), candidates_.end(), aged)
                         ? std::stable_partition(candidates_.begin(), candidates_.end(), aged)
                         : candidates_.begin();
  switch (order) {
    case BackfillOrder::kQueue:
      break;
    case BackfillOrder::kShortest:
      std::sort(young, candidates_.end(), [](const BackfillCandidate& a,
                                             const BackfillCandidate& b) {
        if (a.predicted != b.predicted) return a.predicted < b.predicted;
        return a.position < b.position;
      });
      break;
    case BackfillOrder::kExpansion: {
      young_ = static_cast<size_t>(young - candidates_.begin());
      keys_.reserve(candidates_.size() - young_);
      for (size_t i = young_; i < candidates_.size(); ++i) {
        const uint64_t bits = std::bit_cast<uint64_t>(ExpansionFactor(candidates_[i], now));
        keys_.push_back(Key{.inverted_factor = ~bits, .index = i});
      }
      // A long queue is ordered only as far as Next() is asked (a heap): a cycle that fills
      // the cluster stops early. The sort was the largest part of this policy's cost (HPC2N).
      heap_ = keys_.size() > kHeapFrom;
      if (heap_) {
        std::make_heap(keys_.begin(), keys_.end(), KeyAfter);
      } else {
        std::sort(keys_.begin(), keys_.end(), KeyBefore);
      }
      return;
    }
  }
  young_ = candidates_.size();  // all in their final order
}

const BackfillCandidate* BackfillSequence::Next() {
  if (next_ < young_) return &candidates_[next_++];
  if (handed_ == keys_.size()) return nullptr;
  if (!heap_) return &candidates_[keys_[handed_++].index];
  const auto end = keys_.end() - static_cast<std::ptrdiff_t>(handed_++);
  std::pop_heap(keys_.begin(), end, KeyAfter);  // the first in order moves to end - 1
  return &candidates_[(end - 1)->index];
}

void SortCandidates(std::vector<BackfillCandidate>& candidates, BackfillOrder order, Instant now) {
  BackfillSequence sequence(std::move(candidates), order, now);
  std::vector<BackfillCandidate> sorted;
  while (const BackfillCandidate* next = sequence.Next()) sorted.push_back(*next);
  candidates = std::move(sorted);
}

}  // namespace sluice::core
