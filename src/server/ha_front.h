// HaFront: what a controller's HTTP listener answers before its routes, for high
// availability (R-HA-2, R-HA-4). Called from the request guard's pre-routing handler
// (HttpApi's `front`, request_guard.h), once the request's limits are checked:
//  - `GET /healthz` always: 200 {"role": "leader"|"standby"|"candidate"|"deposed", "epoch": N,
//    "leader": URL|null, "writable": bool, "first_cycle_ms": N} (no token needed); a leader
//    whose store may have lost the lead (lease lapsed by its own clock: "candidate") does not
//    say "leader", so at most one controller does;
//  - while this controller does not lead (a standby, or a leader still restoring): 307 to the
//    leader's URL with the same path and query when the store names another leader, else
//    503 {"error": ..., "leader": null};
//  - while it led but its store may have lost the lead (lease lapsed, deposed): 503
//    {"error": ..., "leader": the successor's URL when known, else null to agents (they try
//    the other controllers) and its own URL to user writes (the reason, at once)}; reads are
//    still served;
//  - while it leads but may not write (a write awaiting resync, a full disk): 503
//    {"error": ..., "leader": URL} for every request but reads (GET) and the agents'
//    routes (agents keep their lease; their reports wait, controller_ha.cc);
//  - a standby notes which agents reach it (AgentsHeardWithin): the leader compares them
//    with its own (server.cc, WatchAgentsReach) to step aside when it is the one cut off.
//  - otherwise the routes (http_api.h) answer.
// Representation: the store (for the leader's name), this controller's advertised URL, and
// the controller once it leads (an atomic pointer: set once, after TakeOver).
// Thread-safety: Lead from any thread; Answer runs on cpp-httplib's pool.
// Implements R-HA-2, R-HA-4 (the HTTP side).
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <unordered_map>

#include "base/mutex.h"
#include "server/controller.h"
#include "store/store.h"

namespace sluice::server {

class HaFront {
 public:
  // Whether a request's Authorization is an agent's credential for that host (a standby
  // counts only real agents: anyone could make up names).
  using AgentCheck = std::function<bool(const std::string& authorization, const std::string& host)>;

  HaFront(store::Store& store, std::string self_url, AgentCheck is_agent)
      : store_(store), self_(std::move(self_url)), is_agent_(std::move(is_agent)) {}

  // From now on `controller` (restored, scheduling) answers.
  void Lead(Controller* controller) { controller_.store(controller); }
  bool leading() const { return controller_.load() != nullptr; }

  // Answers the request when it must not reach the routes; true when it answered.
  bool Answer(const httplib::Request& req, httplib::Response& res);

  // A standby: how many distinct agents sent it a request within `window`.
  int AgentsHeardWithin(std::chrono::milliseconds window);

 private:
  static constexpr size_t kMaxHeard = 100'000;  // names kept (a flood of made-up names stops here)

  void Health(httplib::Response& res);
  void NoteAgent(const httplib::Request& req);

  store::Store& store_;
  const std::string self_;
  const AgentCheck is_agent_;
  std::atomic<Controller*> controller_ = nullptr;
  Mutex heard_mu_{LockRank::kAgentsHeard};
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> heard_
      SLUICE_GUARDED_BY(heard_mu_);
};

}  // namespace sluice::server
