// AgentRegistry's part in health checks (R-OPS-4; docs/health-checks.md): an agent's report
// of its host's check closes or reopens the host. The close is the checker's own, apart from
// an administrator's (ClusterSettings::SetHealthFailure says why).
#include <optional>
#include <string>

#include "server/agent_registry.h"

namespace sluice::server {

void AgentRegistry::ApplyHealth(const std::string& name, const wire::HealthReport& report) {
  // A report for a check the configuration no longer has (an agent not yet told) is a pass:
  // it must not close the host again after a reconfiguration removed its check.
  const bool failed = !report.ok && settings_.HealthCheckFor(name).has_value();
  std::optional<std::string> failure;
  if (failed) failure = report.message.empty() ? std::string("failed") : report.message;
  if (!settings_.SetHealthFailure(name, failure)) return;
  if (failed) {
    ctx_.log().warn("host {}: closed by its health check: {} (it reopens when the check passes)",
                    name, *failure);
  } else if (settings_.HostClosed(name)) {
    ctx_.log().info("host {}: health check passes again; it stays closed by an administrator",
                    name);
  } else {
    ctx_.log().info("host {}: health check passes again; reopened", name);
  }
  SyncHostState(name);
}

std::string AgentRegistry::HealthFailureOf(const std::string& name) const {
  const std::string* failure = settings_.HealthFailure(name);
  return failure == nullptr ? std::string() : *failure;
}

}  // namespace sluice::server
