#include "core/admission/slot_profile.h"

#include <algorithm>

namespace sluice::core {

SlotProfile::SlotProfile(Instant now, int64_t free_now, const std::vector<Release>& releases) {
  std::vector<Release> sorted;
  sorted.reserve(releases.size());
  for (const Release& r : releases) {
    if (r.expected_end == kInfinite) continue;  // never releases
    sorted.push_back(Release{.expected_end = std::max(r.expected_end, now), .slots = r.slots});
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const Release& a, const Release& b) { return a.expected_end < b.expected_end; });
  steps_.push_back(Step{now, free_now});
  for (const Release& r : sorted) {
    if (r.expected_end == steps_.back().time) {
      steps_.back().free += r.slots;
    } else {
      steps_.push_back(Step{r.expected_end, steps_.back().free + r.slots});
    }
  }
}

size_t SlotProfile::StepAt(Instant t) const {
  // The last step whose time is <= t.
  auto it = std::upper_bound(steps_.begin(), steps_.end(), t,
                             [](Instant value, const Step& s) { return value < s.time; });
  return it == steps_.begin() ? 0 : static_cast<size_t>(it - steps_.begin()) - 1;
}

int64_t SlotProfile::FreeAt(Instant t) const { return steps_[StepAt(t)].free; }

size_t SlotProfile::SplitAt(Instant t) {
  const size_t i = StepAt(t);
  if (steps_[i].time == t) return i;
  steps_.insert(steps_.begin() + static_cast<std::ptrdiff_t>(i) + 1, Step{t, steps_[i].free});
  return i + 1;
}

void SlotProfile::Add(Instant start, Instant end, int64_t delta) {
  if (start >= end) return;
  const size_t first = SplitAt(start);
  const size_t last = end == kInfinite ? steps_.size() : SplitAt(end);
  for (size_t i = first; i < last; ++i) steps_[i].free += delta;
}

bool SlotProfile::Fits(Instant start, Instant end, int64_t slots) const {
  if (start >= end) return true;
  for (size_t i = StepAt(start); i < steps_.size() && steps_[i].time < end; ++i) {
    if (steps_[i].free < slots) return false;
  }
  return true;
}

Instant SlotProfile::EarliestFit(int64_t slots, Duration duration) const {
  // Two pointers: a start at step i holds until the first step j >= i with too few slots;
  // every start in [i, j] fails then, so the next try is j + 1.
  size_t i = 0;
  while (i < steps_.size()) {
    if (steps_[i].free < slots) {
      ++i;
      continue;
    }
    const Instant end = AddDuration(steps_[i].time, duration);
    size_t j = i + 1;
    while (j < steps_.size() && steps_[j].time < end && steps_[j].free >= slots) ++j;
    if (j == steps_.size() || steps_[j].time >= end) return steps_[i].time;
    i = j + 1;
  }
  return kInfinite;
}

}  // namespace sluice::core
