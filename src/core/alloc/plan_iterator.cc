#include "core/alloc/plan_iterator.h"

#include <algorithm>

namespace sluice::core {

PlanIterator::PlanIterator(PlanShape shape, std::span<const int32_t> fits)
    : shape_(shape), fits_(fits) {
  const int32_t n = shape_.tasks;
  if (n <= 0 || fits_.empty() || fits_.front() <= 0) return;
  if (shape_.one_host) {
    buckets_.assign(1, n);
    valid_ = Feasible();
    k_ = n;  // Next() ends the iteration
    return;
  }
  if (shape_.ptile > 0) {
    buckets_.assign(static_cast<size_t>(n / shape_.ptile), shape_.ptile);
    if (n % shape_.ptile != 0) buckets_.push_back(n % shape_.ptile);
    valid_ = Feasible();
    k_ = n;
    return;
  }
  // The largest bucket of k hosts is ceil(n/k); no plan with ceil(n/k) > max fit can work.
  k_ = (n + fits_.front() - 1) / fits_.front();
  SeekFeasible();
}

void PlanIterator::Next() {
  if (!valid_) return;
  if (shape_.one_host || shape_.ptile > 0) {
    valid_ = false;
    return;
  }
  ++k_;
  SeekFeasible();
}

void PlanIterator::SeekFeasible() {
  const int32_t max_k = std::min<int64_t>(shape_.tasks, static_cast<int64_t>(fits_.size()));
  for (; k_ <= max_k; ++k_) {
    MakeBalanced(k_);
    if (Feasible()) {
      valid_ = true;
      return;
    }
  }
  // The packed plan, once, unless it equals a balanced plan already tried (then it failed).
  valid_ = false;
  if (packed_) return;
  packed_ = true;
  if (!MakePacked()) return;
  const int32_t k = static_cast<int32_t>(buckets_.size());
  const bool balanced = buckets_.front() - buckets_.back() <= 1;
  valid_ = !(balanced && k <= max_k);
}

bool PlanIterator::MakePacked() {
  buckets_.clear();
  int32_t left = shape_.tasks;
  for (int32_t fit : fits_) {
    if (left == 0 || fit <= 0) break;
    const int32_t take = std::min(fit, left);
    buckets_.push_back(take);
    left -= take;
  }
  return left == 0;
}

void PlanIterator::MakeBalanced(int32_t k) {
  const int32_t n = shape_.tasks;
  buckets_.assign(static_cast<size_t>(k), n / k);
  for (int32_t i = 0; i < n % k; ++i) buckets_[static_cast<size_t>(i)] += 1;
}

bool PlanIterator::Feasible() const {
  if (buckets_.size() > fits_.size()) return false;
  // Buckets take at most two sizes here, so checking where each size first appears suffices;
  // a ptile plan's remainder bucket is the second size.
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (i > 0 && buckets_[i] == buckets_[i - 1]) continue;
    // The last index with this bucket size must still find a host that fits it.
    size_t last = i;
    while (last + 1 < buckets_.size() && buckets_[last + 1] == buckets_[i]) ++last;
    if (fits_[last] < buckets_[i]) return false;
  }
  return true;
}

}  // namespace sluice::core
