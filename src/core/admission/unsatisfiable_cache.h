// UnsatisfiableCache: within one cycle, a request that did not fit the free capacity is
// remembered, so later jobs with the same key pend at once with the same reasons, without
// iterating plans or hosts (R-AL-5, R-PR-3).
//
// Key: everything the allocator and the limits consume — the whole request's fingerprint
// (all alternatives and parts), the task range, the exclusive flag and the queue; plus user
// and project when the cluster has named limits (the only mechanism in Nominate that reads
// them); plus the run limit and the reservation when the cluster has advance reservations
// (which hosts a job may use depends on when it would end, R-RSV-2). Without limits, jobs of every user with one request shape share an entry: at a
// million pending jobs of a thousand shapes that is what keeps explaining every job cheap
// (issue 8). A fingerprint match is confirmed with Request::operator== (and equal user and
// project strings when they are keyed) so two requests are never confused. Valid for one
// cycle only: within a cycle capacity only shrinks, so a request that did not fit earlier
// cannot fit later. Only "does not fit now" outcomes of the allocator go in; reservation,
// gate and run-limit refusals are the policies' and never do.
// Lookup cost: one hash of the key, plus one request comparison on a hit.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "core/model/cluster_state.h"
#include "core/model/job.h"
#include "core/reasons/reason.h"

namespace sluice::core {

class UnsatisfiableCache {
 public:
  // Keys by user and project too: always right, whatever the cluster's limits.
  UnsatisfiableCache() = default;
  // Keys by user and project only when `state` has named limits.
  explicit UnsatisfiableCache(const ClusterState& state);

  // The reasons recorded for a job with the same key, or nullptr.
  const PendingReasons* Find(const Job& job) const;
  void Insert(const Job& job, const PendingReasons& reasons);
  size_t size() const { return entries_.size(); }

 private:
  struct Key {
    uint64_t fingerprint = 0;
    int32_t min_tasks = 0;
    int32_t max_tasks = 0;
    QueueIndex queue = 0;
    bool exclusive = false;
    // Views of the first job's strings (jobs outlive the cycle); empty when not keyed.
    std::string_view user;
    std::string_view project;
    Duration run_limit = -1;  // -1: none, or not keyed
    std::string_view reservation;
    friend bool operator==(const Key&, const Key&) = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  struct Entry {
    const resreq::Request* request = nullptr;
    PendingReasons reasons;
  };
  Key KeyOf(const Job& job) const;

  bool by_consumer_ = true;
  bool by_reservation_ = true;
  std::unordered_map<Key, Entry, KeyHash> entries_;  // never iterated
};

}  // namespace sluice::core
