#include "server/service_status.h"

#include <fmt/format.h>

namespace sluice::server {

std::string ServiceStatusLine(const ServiceFacts& facts) {
  if (facts.role == "standby") {
    return facts.leader ? "standby: following the leader at " + *facts.leader
                        : "standby: no leader elected yet";
  }
  const std::string who =
      facts.role == "serving" ? facts.role : fmt::format("{} (epoch {})", facts.role, facts.epoch);
  return fmt::format("{}: {} of {} hosts accept work; {} jobs running, {} pending, {} held", who,
                     facts.hosts_ok, facts.hosts, facts.running, facts.pending, facts.held);
}

}  // namespace sluice::server
