// The line `sluice server` shows systemd in STATUS= (R-OPS-2: leader or standby, hosts, jobs),
// e.g. `leader (epoch 7): 3 of 4 hosts accept work; 2 jobs running, 5 pending, 1 held` or
// `standby: following the leader at http://c1:8740`. `systemctl status` prints it.
// Thread-safety: a plain function of its argument.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sluice::server {

struct ServiceFacts {
  // `serving` (a state directory: no election), `leader`, `standby`, or the store's role
  // when a controller that led no longer does (`candidate`: its lead lapsed, `deposed`).
  std::string role;
  uint64_t epoch = 0;                 // while leading, in HA
  std::optional<std::string> leader;  // a standby's leader, when one is known
  // The cluster, while serving or leading.
  int64_t hosts = 0;
  int64_t hosts_ok = 0;
  int64_t running = 0;
  int64_t pending = 0;
  int64_t held = 0;
};

std::string ServiceStatusLine(const ServiceFacts& facts);

}  // namespace sluice::server
