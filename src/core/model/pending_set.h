// PendingSet: one queue's pending jobs in queue order (R-ADM-2): job priority descending,
// then enqueue sequence. A cycle walks every entry of every queue, so the order is kept
// flat (issue 8: a million-node std::set cost ~15% of an explained cycle in pointer chasing).
//
// Representation:
//  - main_: a vector sorted by key. Erase leaves a tombstone (job == nullptr, key kept, so
//    the vector stays sorted and binary-searchable); tombstones are compacted away once they
//    outnumber an eighth of the vector, and a leading run of them (heads that started) is
//    skipped by `first_` at no cost.
//  - side_: a small sorted vector of entries inserted out of order (a higher priority than
//    the tail, a requeued or restored job). It is merged into main_ once it holds more than
//    ~sqrt(size) entries, so an out-of-order insert costs amortized O(sqrt(n)), an in-order
//    insert (the usual submission) O(1), an erase O(log n) amortized.
//  - An insert whose key equals a tombstone's revives it in place (a requeued job goes back
//    to the position it started from).
// Iteration merges main_ (skipping tombstones) and side_: a forward walk in key order.
// Invariants: keys are unique among live entries and tombstones; size() counts live ones.
// Iterators and references are invalidated by any insert or erase.
// Thread-safety: none (owned by ClusterState).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "core/model/job.h"

namespace sluice::core {

// One entry of a queue's pending set, in queue order: job priority descending, then
// enqueue sequence (R-ADM-2). The job pointer is not part of the order.
struct PendingEntry {
  int32_t neg_priority = 0;
  uint64_t seq = 0;
  Job* job = nullptr;

  friend bool operator<(const PendingEntry& a, const PendingEntry& b) {
    if (a.neg_priority != b.neg_priority) return a.neg_priority < b.neg_priority;
    return a.seq < b.seq;
  }
};

class PendingSet {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = PendingEntry;
    using difference_type = std::ptrdiff_t;
    using pointer = const PendingEntry*;
    using reference = const PendingEntry&;

    const_iterator() = default;
    const PendingEntry& operator*() const { return FromSide() ? *side_ : *main_; }
    const PendingEntry* operator->() const { return &**this; }
    const_iterator& operator++() {
      if (FromSide()) {
        ++side_;
      } else {
        ++main_;
        SkipTombstones();
        // A walk reads each job once, in an order unrelated to where the jobs live: the
        // cache misses, not the work, dominate an explained cycle (issue 8). Asking for the
        // job a few entries ahead (the lines a cycle reads of it) overlaps them with the
        // work. Written here, not in a helper: GCC finds a function of prefetches alone
        // free of side effects and drops its calls.
        if (main_end_ - main_ > kPrefetchAhead) {
          if (const Job* job = main_[kPrefetchAhead].job; job != nullptr) {
            __builtin_prefetch(job);
            __builtin_prefetch(&job->spec.min_tasks);  // and run_limit
            __builtin_prefetch(&job->spec.begin_time);
            __builtin_prefetch(&job->state);  // and exclusive, queue
            __builtin_prefetch(&job->classified);
            __builtin_prefetch(&job->request);  // and min_slots
            __builtin_prefetch(&job->min_slots);
          }
        }
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.main_ == b.main_ && a.side_ == b.side_;
    }

   private:
    friend class PendingSet;
    const_iterator(const PendingEntry* main, const PendingEntry* main_end, const PendingEntry* side,
                   const PendingEntry* side_end)
        : main_(main), main_end_(main_end), side_(side), side_end_(side_end) {
      SkipTombstones();
    }
    bool FromSide() const { return side_ != side_end_ && (main_ == main_end_ || *side_ < *main_); }
    void SkipTombstones() {
      while (main_ != main_end_ && main_->job == nullptr) ++main_;
    }
    static constexpr std::ptrdiff_t kPrefetchAhead = 8;

    const PendingEntry* main_ = nullptr;
    const PendingEntry* main_end_ = nullptr;
    const PendingEntry* side_ = nullptr;
    const PendingEntry* side_end_ = nullptr;
  };
  using iterator = const_iterator;
  using value_type = PendingEntry;

  const_iterator begin() const {
    return const_iterator(main_.data() + first_, main_.data() + main_.size(), side_.data(),
                          side_.data() + side_.size());
  }
  const_iterator end() const {
    const PendingEntry* main_end = main_.data() + main_.size();
    const PendingEntry* side_end = side_.data() + side_.size();
    return const_iterator(main_end, main_end, side_end, side_end);
  }
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

  // Whether a live entry has this key (the job pointer is ignored).
  bool contains(const PendingEntry& key) const;
  // Adds the entry; false (and nothing changes) when its key is already live.
  // REQUIRES: entry.job != nullptr.
  bool insert(const PendingEntry& entry);
  // Removes the live entry with this key; returns how many were removed (0 or 1).
  size_t erase(const PendingEntry& key);

 private:
  void Compact();  // merges side_ into main_ and drops tombstones

  std::vector<PendingEntry> main_;
  std::vector<PendingEntry> side_;
  size_t first_ = 0;       // main_[i] for i < first_ are tombstones
  size_t tombstones_ = 0;  // in main_, including those before first_
  size_t live_ = 0;
};

}  // namespace sluice::core
