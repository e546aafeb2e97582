// AgentWakeups: where the agents' long polls wait for work (AgentRegistry::Heartbeat and its
// batched form, agent_batch.cc), and the hosts that have new work since a batched poll looked
// (a launch committed, a kill or run-limit order given): that poll looks at these at each
// wake-up, at the others only every few hundred ms, instead of at every host it waits for.
// Thread-safety: every method REQUIRES the controller's lock (the `mu` given at
// construction), except WakeAll; waits release it while they wait.
#pragma once

#include <condition_variable>
#include <set>
#include <string>

#include "base/mutex.h"
#include "server/cycle_pacing.h"

namespace sluice::server {

class AgentWakeups {
 public:
  explicit AgentWakeups(Mutex& mu) : mu_(mu) {}

  // `host` has new work: its poll answers now.
  void Mark(const std::string& host) SLUICE_REQUIRES(mu_) {
    marked_.insert(host);
    cv_.notify_all();
  }
  // Every poll looks again (a commit, a newer poll of the same host, a peek order).
  void WakeAll() { cv_.notify_all(); }
  // Unmarks the marked hosts that `serves` accepts and calls `visit` with each.
  template <typename Serves, typename Visit>
  void TakeMarked(Serves serves, Visit visit) SLUICE_REQUIRES(mu_) {
    for (auto it = marked_.begin(); it != marked_.end();) {
      if (!serves(*it)) {
        ++it;
        continue;
      }
      const std::string host = *it;
      it = marked_.erase(it);
      visit(host);
    }
  }
  // Waits for a wake-up, at most until `deadline`.
  void WaitUntil(MutexLock& lock, SteadyTime deadline) { cv_.wait_until(lock, deadline); }

 private:
  Mutex& mu_;
  std::condition_variable_any cv_;
  std::set<std::string> marked_ SLUICE_GUARDED_BY(mu_);
};

}  // namespace sluice::server
