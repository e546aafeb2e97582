// RunningList: the running jobs in start order (RunningEntry::start_seq), as ClusterState
// keeps them. Every start takes the next start sequence, so a start always appends.
//
// Representation: a vector of entries sorted by start_seq. Erase finds its entry by binary
// search and leaves a tombstone (job == nullptr, start_seq kept, so the vector stays sorted);
// the tombstones are compacted away once they outnumber the live entries. Append is O(1),
// erase O(log n) amortized, iteration O(live + tombstones) <= O(2 live + 1). A std::set
// held these before: its node allocations and rebalancing were ~3 % of a trace replay.
// Iteration, forward or reverse, skips tombstones: the order is the set's.
// Invariants: start_seq strictly increasing over entries_ (live and tombstones); live_ counts
// the live entries. Iterators are invalidated by Append and Erase.
// Thread-safety: none (owned by ClusterState).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "base/check.h"
#include "core/model/job.h"

namespace sluice::core {

// A running job and its place in start order.
struct RunningEntry {
  uint64_t start_seq = 0;
  Job* job = nullptr;

  friend bool operator<(const RunningEntry& a, const RunningEntry& b) {
    return a.start_seq < b.start_seq;
  }
};

class RunningList {
 public:
  class const_iterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = RunningEntry;
    using difference_type = std::ptrdiff_t;
    using pointer = const RunningEntry*;
    using reference = const RunningEntry&;

    const_iterator() = default;
    const RunningEntry& operator*() const { return *at_; }
    const RunningEntry* operator->() const { return at_; }
    const_iterator& operator++() {
      ++at_;
      while (at_ != end_ && at_->job == nullptr) ++at_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator was = *this;
      ++*this;
      return was;
    }
    // REQUIRES: not begin(); a live entry then lies before, so the walk stops on it.
    const_iterator& operator--() {
      --at_;
      while (at_->job == nullptr) --at_;
      return *this;
    }
    const_iterator operator--(int) {
      const_iterator was = *this;
      --*this;
      return was;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.at_ == b.at_;
    }

   private:
    friend class RunningList;
    const_iterator(const RunningEntry* at, const RunningEntry* end) : at_(at), end_(end) {
      while (at_ != end_ && at_->job == nullptr) ++at_;
    }
    const RunningEntry* at_ = nullptr;
    const RunningEntry* end_ = nullptr;
  };
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  // REQUIRES: entry.job != nullptr and entry.start_seq above every start_seq appended so far.
  void Append(RunningEntry entry) {
    SLUICE_CHECK(entry.job != nullptr &&
                 (entries_.empty() || entries_.back().start_seq < entry.start_seq));
    entries_.push_back(entry);
    ++live_;
  }
  // Removes the live entry with `start_seq`. False when there is none.
  bool Erase(uint64_t start_seq) {
    auto it =
        std::lower_bound(entries_.begin(), entries_.end(), start_seq,
                         [](const RunningEntry& e, uint64_t seq) { return e.start_seq < seq; });
    if (it == entries_.end() || it->start_seq != start_seq || it->job == nullptr) return false;
    it->job = nullptr;
    --live_;
    if (entries_.size() - live_ > live_) Compact();
    return true;
  }

  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  const_iterator begin() const { return const_iterator(Data(), Data() + entries_.size()); }
  const_iterator end() const {
    return const_iterator(Data() + entries_.size(), Data() + entries_.size());
  }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  // Entries held, tombstones included (tests of the compaction).
  size_t held() const { return entries_.size(); }

 private:
  const RunningEntry* Data() const { return entries_.data(); }
  void Compact() {
    std::erase_if(entries_, [](const RunningEntry& e) { return e.job == nullptr; });
  }

  std::vector<RunningEntry> entries_;
  size_t live_ = 0;
};

}  // namespace sluice::core
