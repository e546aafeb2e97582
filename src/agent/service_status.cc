#include "agent/service_status.h"

#include <fmt/format.h>

namespace sluice::agent {

std::string AgentStatusLine(const AgentFacts& facts) {
  const std::string jobs = fmt::format("{} jobs running", facts.running);
  if (facts.fenced) {
    return "fenced: no controller answered within the absence allowed, jobs were ended; " + jobs +
           "; retrying";
  }
  const std::string reach =
      facts.unreachable.empty() ? "" : "cannot reach the controller at " + facts.unreachable;
  if (!facts.registered) {
    return reach.empty() ? "registering with " + facts.server : "registering: " + reach;
  }
  const std::string where = facts.leader_url.empty() ? facts.server : facts.leader_url;
  if (!facts.connected && !reach.empty()) {
    return fmt::format("registered (epoch {}), {}; {}", facts.epoch, reach, jobs);
  }
  return fmt::format("registered with {} (epoch {}); {}", where, facts.epoch, jobs);
}

}  // namespace sluice::agent
