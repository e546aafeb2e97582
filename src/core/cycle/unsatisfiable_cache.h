// UnsatisfiableCache: within one cycle, a request that did not fit the free capacity is
// remembered, so later jobs with the same key pend at once with the same reasons, without
// iterating plans or hosts (R-AL-5, R-PR-3).
//
// Key: everything the allocator (and, later, the limits) consumes — the whole request's
// fingerprint (all alternatives and parts), the task range, the exclusive flag, user, queue
// and project. A fingerprint match is confirmed with Request::operator== so two requests
// are never confused. Valid for one cycle only: within a cycle capacity only shrinks, so a
// request that did not fit earlier cannot fit later. Only "does not fit now" outcomes of the
// allocator go in; reservation, gate and run-limit refusals are the policies' and never do.
// Lookup cost: O(log entries) plus one request comparison.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "core/model/job.h"
#include "core/reasons/reason.h"

namespace sluice::core {

class UnsatisfiableCache {
 public:
  // The reasons recorded for a job with the same key, or nullptr.
  const PendingReasons* Find(const Job& job) const;
  void Insert(const Job& job, const PendingReasons& reasons);
  size_t size() const { return entries_.size(); }

 private:
  using Key = std::tuple<uint64_t, int32_t, int32_t, bool, std::string, QueueIndex, std::string>;
  struct Entry {
    const resreq::Request* request = nullptr;
    PendingReasons reasons;
  };
  static Key KeyOf(const Job& job);

  std::map<Key, Entry> entries_;
};

}  // namespace sluice::core
