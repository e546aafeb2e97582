#include "core/model/pending_set.h"

#include <algorithm>

#include "base/check.h"

namespace sluice::core {
namespace {

bool SameKey(const PendingEntry& a, const PendingEntry& b) {
  return a.neg_priority == b.neg_priority && a.seq == b.seq;
}

}  // namespace

bool PendingSet::contains(const PendingEntry& key) const {
  auto side = std::lower_bound(side_.begin(), side_.end(), key);
  if (side != side_.end() && SameKey(*side, key)) return true;
  auto main =
      std::lower_bound(main_.begin() + static_cast<std::ptrdiff_t>(first_), main_.end(), key);
  return main != main_.end() && SameKey(*main, key) && main->job != nullptr;
}

bool PendingSet::insert(const PendingEntry& entry) {
  SLUICE_CHECK(entry.job != nullptr);
  // 1. The usual submission: after every key so far (side_ keys are all below main_.back()).
  if (main_.empty() || main_.back() < entry) {
    main_.push_back(entry);
    ++live_;
    return true;
  }
  // 2. A tombstone with the same key comes back to life where it was.
  auto main = std::lower_bound(main_.begin(), main_.end(), entry);
  if (SameKey(*main, entry)) {
    if (main->job != nullptr) return false;
    main->job = entry.job;
    --tombstones_;
    ++live_;
    first_ = std::min(first_, static_cast<size_t>(main - main_.begin()));
    return true;
  }
  // 3. Anywhere else: the side vector, merged in once it outgrows ~sqrt(size).
  auto side = std::lower_bound(side_.begin(), side_.end(), entry);
  if (side != side_.end() && SameKey(*side, entry)) return false;
  side_.insert(side, entry);
  ++live_;
  if (side_.size() > 32 && side_.size() * side_.size() > main_.size()) Compact();
  return true;
}

size_t PendingSet::erase(const PendingEntry& key) {
  auto side = std::lower_bound(side_.begin(), side_.end(), key);
  if (side != side_.end() && SameKey(*side, key)) {
    side_.erase(side);
    --live_;
    return 1;
  }
  auto main =
      std::lower_bound(main_.begin() + static_cast<std::ptrdiff_t>(first_), main_.end(), key);
  if (main == main_.end() || !SameKey(*main, key) || main->job == nullptr) return 0;
  main->job = nullptr;
  ++tombstones_;
  --live_;
  while (first_ < main_.size() && main_[first_].job == nullptr) ++first_;
  // Compaction costs O(size) after size/8 erasures: O(1) amortized per erase, and a walk
  // passes at most one tombstone per eight entries.
  if (live_ == 0 || tombstones_ > 64 + main_.size() / 8) Compact();
  return 1;
}

void PendingSet::Compact() {
  std::vector<PendingEntry> merged;
  merged.reserve(live_);
  auto side = side_.begin();
  for (size_t i = first_; i < main_.size(); ++i) {
    const PendingEntry& entry = main_[i];
    if (entry.job == nullptr) continue;
    while (side != side_.end() && *side < entry) merged.push_back(*side++);
    merged.push_back(entry);
  }
  merged.insert(merged.end(), side, side_.end());
  main_ = std::move(merged);
  side_.clear();
  first_ = 0;
  tombstones_ = 0;
}

}  // namespace sluice::core
