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

// One leader at a time answers "leader": a controller whose store may have lost the lead (its
// election lease lapsed by its own clock, or deposed) says so, even before it steps down.
void HaFront::Health(httplib::Response& res) {
  Controller* c = controller_.load();
  const store::Role role = store_.role();
  const bool leads = c != nullptr && role == store::Role::kLeader;
  const std::optional<std::string> leader = store_.leader();
  std::string said = "standby";
  if (c != nullptr) said = leads ? "leader" : std::string(store::ToString(role));
  json body = {{"role", said},
               {"epoch", c != nullptr ? c->epoch() : 0},
               {"leader", leads ? json(self_)
                                : (leader && *leader != self_ ? json(*leader) : json(nullptr))},
               {"writable", leads && c->Writable()},
               {"first_cycle_ms", c != nullptr ? c->FirstCycleMs() : 0}};
  SendJson(res, 200, body);
}

// A heartbeat's host, once its credential checks out (registrations and batches are not
// counted: they name their hosts in the body).
void HaFront::NoteAgent(const httplib::Request& req) {
  constexpr std::string_view kPrefix = "/v1/agents/";
  constexpr std::string_view kSuffix = "/heartbeat";
  if (!req.path.ends_with(kSuffix) || req.path.size() <= kPrefix.size() + kSuffix.size()) return;
  const std::string name =
      req.path.substr(kPrefix.size(), req.path.size() - kPrefix.size() - kSuffix.size());
  if (name.find('/') != std::string::npos) return;
  if (!is_agent_ || !is_agent_(req.get_header_value("Authorization"), name)) return;
  std::lock_guard lock(heard_mu_);
  if (heard_.size() < kMaxHeard || heard_.contains(name)) {
    heard_[name] = std::chrono::steady_clock::now();
  }
}

int HaFront::AgentsHeardWithin(std::chrono::milliseconds window) {
  const auto cutoff = std::chrono::steady_clock::now() - window;
  std::lock_guard lock(heard_mu_);
  std::erase_if(heard_, [&](const auto& entry) { return entry.second < cutoff; });
  return static_cast<int>(heard_.size());
}

bool HaFront::Answer(const httplib::Request& req, httplib::Response& res) {
  if (req.path == "/healthz") {
    Health(res);
    return true;
  }
  Controller* c = controller_.load();
  const bool agent = req.path.starts_with("/v1/agents/");
  if (c == nullptr) {
    if (agent) NoteAgent(req);
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
  const store::Role role = store_.role();
  if (role != store::Role::kLeader && (agent || req.method != "GET")) {
    // Agents go on to the other controllers at once: a successor may lead already (issue 44:
    // agents stayed with a leader cut off from etcd, so nothing started for the whole
    // partition). A user's write goes to a successor this controller knows of, else stops
    // here with the reason (the CLI's "leader" is this controller: it does not wander).
    const std::optional<std::string> leader = store_.leader();
    const bool elsewhere = leader && *leader != self_;
    SendJson(res, 503,
             {{"error", role == store::Role::kDeposed
                            ? "this controller was deposed"
                            : "this controller's lead lapsed (its election lease may have "
                              "expired: etcd unreachable, or the process was paused); another "
                              "controller may lead: retry"},
              {"leader", elsewhere ? json(*leader) : (agent ? json(nullptr) : json(self_))}});
    return true;
  }
  if (req.method == "GET" || agent || c->Writable()) return false;
  const std::string fault = c->StoreFault();
  SendJson(res, 503,
           {{"error", "the store cannot be written now (" +
                          (fault.empty() ? std::string("no etcd quorum?") : fault) +
                          "): the request was not applied; retry"},
            {"leader", self_}});
  return true;
}

}  // namespace sluice::server
