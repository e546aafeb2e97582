#include "server/agent_credentials.h"

namespace sluice::server {

Status CheckAgentHost(const Caller& caller, const std::string& host) {
  // An empty register name: the decoder refuses the body with its own message.
  if (caller.agent_hosts == nullptr || host.empty() || caller.agent_hosts->contains(host)) {
    return Status::Ok();
  }
  std::string covered;
  int listed = 0;
  for (const std::string& name : *caller.agent_hosts) {
    if (++listed > 5) {
      covered += ", ... (" + std::to_string(caller.agent_hosts->size()) + " hosts)";
      break;
    }
    covered += (covered.empty() ? "" : ", ") + name;
  }
  return Status(StatusCode::kPermissionDenied,
                "this agent credential may not serve host " + host + " (it covers " + covered +
                    "): give the agent the token of an auth.agents entry listing the host");
}

std::string RegisteredHostName(const nlohmann::json& body) {
  if (!body.is_object()) return "";
  auto name = body.find("name");
  return name != body.end() && name->is_string() ? name->get<std::string>() : "";
}

}  // namespace sluice::server
