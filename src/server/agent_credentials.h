// Agent identity (issue 19): an agent credential speaks only for the hosts it is bound to.
// `auth.agents[]` tokens carry their hosts (Caller::agent_hosts); the shared `agent_token`
// and MUNGE as uid 0 may serve any host. The agent routes check the host a request speaks
// for (the registered name, or the heartbeat's path) before the controller sees it.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "server/context.h"

namespace sluice::server {

// Ok when `caller` may speak for `host`; kPermissionDenied naming the host and the hosts the
// credential covers otherwise. A caller without a host binding may speak for any host.
Status CheckAgentHost(const Caller& caller, const std::string& host);

// The host name a register body claims (`name`), "" when it has none of the right type (the
// decoder then refuses the body).
std::string RegisteredHostName(const nlohmann::json& body);

}  // namespace sluice::server
