// HaFront: what a controller's HTTP listener answers before its routes, for high
// availability (R-HA-2, R-HA-4). Called from the request guard's pre-routing handler
// (HttpApi's `front`, request_guard.h), once the request's limits are checked:
//  - `GET /healthz` always: 200 {"role": "leader"|"standby", "epoch": N, "leader": URL|null,
//    "writable": bool, "first_cycle_ms": N} (no token needed);
//  - while this controller does not lead (a standby, or a leader still restoring): 307 to the
//    leader's URL with the same path and query when the store names another leader, else
//    503 {"error": ..., "leader": null};
//  - while it leads but may not write (no etcd quorum, a write awaiting resync, deposed):
//    503 {"error": ..., "leader": URL} for every request but reads (GET) and the agents'
//    routes (agents keep their lease; their reports wait, controller_ha.cc);
//  - otherwise the routes (http_api.h) answer.
// Representation: the store (for the leader's name), this controller's advertised URL, and
// the controller once it leads (an atomic pointer: set once, after TakeOver).
// Thread-safety: Lead from any thread; Answer runs on cpp-httplib's pool.
// Implements R-HA-2, R-HA-4 (the HTTP side).
#pragma once

#include <httplib.h>

#include <atomic>
#include <string>

#include "server/controller.h"
#include "store/store.h"

namespace sluice::server {

class HaFront {
 public:
  HaFront(store::Store& store, std::string self_url) : store_(store), self_(std::move(self_url)) {}

  // From now on `controller` (restored, scheduling) answers.
  void Lead(Controller* controller) { controller_.store(controller); }
  bool leading() const { return controller_.load() != nullptr; }

  // Answers the request when it must not reach the routes; true when it answered.
  bool Answer(const httplib::Request& req, httplib::Response& res);

 private:
  void Health(httplib::Response& res);

  store::Store& store_;
  const std::string self_;
  std::atomic<Controller*> controller_ = nullptr;
};

}  // namespace sluice::server
