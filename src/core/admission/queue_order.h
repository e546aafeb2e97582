// QueueOrder: the order in which an admission policy walks a queue's pending jobs in one
// cycle (R-ADM-2). Usually the queue's pending set itself (job priority, then enqueue
// sequence), walked in place; a fairshare queue (R-Q-4) walks an order computed for the
// cycle instead (fairshare.h). Policies see one forward range of `const Job&` either way.
#pragma once

#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

#include "core/model/cluster_state.h"

namespace sluice::core {

class QueueOrder {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Job;
    using difference_type = std::ptrdiff_t;
    using pointer = const Job*;
    using reference = const Job&;

    iterator() = default;
    const Job& operator*() const { return computed_ ? **slot_ : *set_it_->job; }
    const Job* operator->() const { return &**this; }
    iterator& operator++() {
      if (computed_) {
        ++slot_;
      } else {
        ++set_it_;
      }
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const iterator& a, const iterator& b) {
      return a.computed_ ? a.slot_ == b.slot_ : a.set_it_ == b.set_it_;
    }

   private:
    friend class QueueOrder;
    PendingSet::const_iterator set_it_{};
    const Job* const* slot_ = nullptr;
    bool computed_ = false;
  };

  // The queue's own order; no copy.
  explicit QueueOrder(const PendingSet& pending) : pending_(&pending) {}
  // An order computed for this cycle.
  explicit QueueOrder(std::vector<const Job*> jobs) : jobs_(std::move(jobs)) {}

  iterator begin() const { return Edge(/*first=*/true); }
  iterator end() const { return Edge(/*first=*/false); }
  bool computed() const { return pending_ == nullptr; }

 private:
  iterator Edge(bool first) const {
    iterator it;
    if (pending_ != nullptr) {
      it.set_it_ = first ? pending_->begin() : pending_->end();
    } else {
      it.computed_ = true;
      it.slot_ = jobs_.data() + (first ? 0 : jobs_.size());
    }
    return it;
  }

  const PendingSet* pending_ = nullptr;
  std::vector<const Job*> jobs_;
};

}  // namespace sluice::core
