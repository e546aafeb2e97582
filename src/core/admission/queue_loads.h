// QueueLoads: each queue's guarantee, maximum and use as one cycle sees them (R-Q-1,
// R-CAP-1, R-CAP-2), computed once at the start of the cycle.
//
// Guarantees and maxima are fractions of all configured slots, compared as real numbers.
// "Runnable pending work" is a pending job that eligibility (held, dependency, begin time,
// window) does not hold back; limits are not consulted (a queue whose only jobs sit at a
// limit still counts as wanting capacity: its owner may be lent nothing more, but its
// guarantee still stands).
// Cost: O(queues) when no queue sets a capacity or a user limit; a queue with
// user_limit_pct also scans its pending jobs once per cycle to find its active users, and
// the running jobs are visited once when some queue has a user limit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/model/cluster_state.h"

namespace sluice::core {

struct QueueLoad {
  double guarantee = 0;  // slots (0 when the queue has no capacity)
  double maximum = 0;    // slots
  // Has runnable pending work; computed only when some queue sets a capacity or this queue
  // sets a user limit (nothing else reads it), false otherwise.
  bool runnable = false;
  // R-CAP-2: slots each user runs in the queue, and the users active there (running or
  // runnable pending jobs), by name.
  std::map<std::string, int64_t> user_slots;
  // user -> runnable pending jobs not started yet in this cycle (0: active by running only)
  std::map<std::string, int64_t> active_users;
};

class QueueLoads {
 public:
  QueueLoads() = default;
  static QueueLoads Compute(const ClusterState& state, Instant now);
  // Makes this what Compute(state, now) returns, whatever it held, reusing its buffers (a
  // driver keeps one across cycles in its CycleWorkspace).
  void Fill(const ClusterState& state, Instant now);

  // True when some queue sets a capacity: R-Q-1's capacity ordering and reclaim apply.
  bool capacities() const { return capacities_; }
  const QueueLoad& of(QueueIndex q) const { return loads_[q]; }
  // A job of `user` started in this cycle: one fewer runnable pending job of theirs waits.
  void Started(QueueIndex q, const std::string& user) {
    auto it = loads_[q].active_users.find(user);
    if (it != loads_[q].active_users.end() && it->second > 0) --it->second;
  }

  // used/guaranteed; a queue guaranteed 0 has ratio 0 when idle, infinite when using any.
  double Ratio(QueueIndex q, int64_t used) const;
  // R-Q-1: the order queues are offered capacity in this cycle.
  std::vector<const Queue*> Order(const ClusterState& state) const;

 private:
  bool capacities_ = false;
  std::vector<QueueLoad> loads_;
};

// Whether a queue's slot maximum (max_capacity) has room for `slots` more with `used` in
// use now; `maximum` is QueueLoad::maximum.
inline bool WithinMaximum(double maximum, int64_t used, int64_t slots) {
  return static_cast<double>(used + slots) <= maximum + 1e-9;
}

}  // namespace sluice::core
