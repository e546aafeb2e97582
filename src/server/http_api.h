// The HTTP front end (docs/api.md): routes only — authenticate the Authorization header
// (bearer token or MUNGE credential, request_auth.h), parse the
// body (size limits first), call the Controller, send its Reply — and the SSE stream. A
// refusal is a Status whose HTTP code comes from the one mapping in http_reply.h. Thin on
// purpose: everything that decides is in the Controller, which tests drive without sockets.
// Thread-safety: httplib runs handlers on its thread pool; the Controller locks.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <utility>

#include "server/controller.h"
#include "server/http_reply.h"

namespace sluice::server {

inline constexpr size_t kMaxBodyBytes = 4 << 20;        // single requests (a 1 MiB script, escaped)
inline constexpr size_t kMaxBatchBodyBytes = 64 << 20;  // POST /v1/jobs/batch

class HttpApi {
 public:
  // `front` answers before the routes when it returns true (HaFront, R-HA-2); may be null.
  using Front = std::function<bool(const httplib::Request&, httplib::Response&)>;
  explicit HttpApi(Controller& controller, Front front = {})
      : controller_(controller), front_(std::move(front)) {}
  // Registers every route on `server` and sizes its thread pool for long polls.
  void Install(httplib::Server& server);
  // Ends open SSE streams (before the server stops).
  void Shutdown() { stopping_ = true; }

 private:
  void InstallJobRoutes(httplib::Server& server);
  void InstallJobActionRoutes(httplib::Server& server);
  void InstallClusterRoutes(httplib::Server& server);
  // /v1/reservations (issue 42, R-RSV-1; advance_reservations.h).
  void InstallReservationRoutes(httplib::Server& server);
  void InstallAgentRoutes(httplib::Server& server);
  // Steps in running jobs and their streams (R-LAUNCH-1..3, step_requests.h).
  void InstallStepRoutes(httplib::Server& server);
  // History, modify and requeue (issue 17, R-UX-6, R-UX-7).
  void InstallHistoryRoutes(httplib::Server& server);
  // GET /v1/events: job events as server-sent events.
  void InstallEvents(httplib::Server& server);

  Controller& controller_;
  Front front_;
  std::atomic<bool> stopping_ = false;
};

}  // namespace sluice::server
