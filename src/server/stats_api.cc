// GET /v1/stats, GET /v1/whoami and the paged GET /v1/jobs (dashboard_routes.h).
#include "server/connection_guard.h"
#include "server/dashboard_routes.h"
#include "server/request_guard.h"

namespace sluice::server {

namespace {

void Send(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply.text.empty() ? SafeDump(reply.body) : reply.text, "application/json");
}

// A user route's caller (the agent token is refused); fills `res` on refusal.
bool AuthenticateUser(Controller& c, const httplib::Request& req, httplib::Response& res,
                      Caller& caller) {
  ConnectionGuard::MarkHandling();
  Status refused =
      AuthorizeRoute(c.AuthenticateRequest(req.get_header_value("Authorization")), false, caller);
  if (!refused.ok()) Send(res, ErrorReply(refused));
  return refused.ok();
}

}  // namespace

void InstallStatsRoutes(httplib::Server& server, Controller& c, StatsSampler& stats) {
  server.Get("/v1/stats", [&c, &stats](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!AuthenticateUser(c, req, res, caller)) return;
    std::map<std::string, std::string> query;
    for (const auto& [k, v] : req.params) query[k] = v;
    Send(res, ReplyOf(stats.Json(query)));
  });
  server.Get("/v1/whoami", [&c](const httplib::Request& req, httplib::Response& res) {
    Caller caller;
    if (!AuthenticateUser(c, req, res, caller)) return;
    Send(res, Reply{200, {{"user", caller.user}, {"admin", caller.admin}}});
  });
}

bool AnswerJobPage(Controller& c, const std::map<std::string, std::string>& query,
                   httplib::Response& res) {
  if (!IsJobPageQuery(query)) return false;
  Result<JobPage> page = c.ListJobPage(query);
  if (!page) {
    Send(res, ErrorReply(page.error()));
    return true;
  }
  res.set_header("X-Total-Count", std::to_string(page->total));
  res.status = 200;
  res.set_content(std::move(page->text), "application/json");
  return true;
}

}  // namespace sluice::server
