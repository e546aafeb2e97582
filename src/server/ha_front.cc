#include "server/ha_front.h"

#include <nlohmann/json.hpp>

namespace sluice::server {

using nlohmann::json;

namespace {

void SendJson(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

}  // namespace

void HaFront::Health(httplib::Response& res) {
  Controller* c = controller_.load();
  const std::optional<std::string> leader = store_.leader();
  json body = {{"role", c != nullptr ? "leader" : "standby"},
               {"epoch", c != nullptr ? c->epoch() : 0},
               {"leader", c != nullptr ? json(self_) : (leader ? json(*leader) : json(nullptr))},
               {"writable", c != nullptr && c->Writable()},
               {"first_cycle_ms", c != nullptr ? c->FirstCycleMs() : 0}};
  SendJson(res, 200, body);
}

bool HaFront::Answer(const httplib::Request& req, httplib::Response& res) {
  if (req.path == "/healthz") {
    Health(res);
    return true;
  }
  Controller* c = controller_.load();
  if (c == nullptr) {
    const std::optional<std::string> leader = store_.leader();
    if (leader && *leader != self_) {
      res.status = 307;
      res.set_header("Location", *leader + req.target);
      res.set_content(json{{"error", "this controller is a standby"}, {"leader", *leader}}.dump(),
                      "application/json");
      return true;
    }
    SendJson(res, 503,
             {{"error", leader ? "this controller is taking over; retry"
                               : "no controller leads yet (no leader elected); retry"},
              {"leader", nullptr}});
    return true;
  }
  if (req.method == "GET" || req.path.starts_with("/v1/agents/") || c->Writable()) return false;
  const std::optional<std::string> leader = store_.leader();
  if (store_.role() == store::Role::kDeposed) {
    SendJson(res, 503,
             {{"error", "this controller was deposed"},
              {"leader", leader && *leader != self_ ? json(*leader) : json(nullptr)}});
    return true;
  }
  const std::string fault = c->StoreFault();
  SendJson(res, 503,
           {{"error", "the store cannot be written now (" +
                          (fault.empty() ? std::string("no etcd quorum?") : fault) +
                          "): the request was not applied; retry"},
            {"leader", self_}});
  return true;
}

}  // namespace sluice::server
