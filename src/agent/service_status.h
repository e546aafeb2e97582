// The line `sluice agent` shows systemd in STATUS= (R-OPS-2), e.g. `registered with
// http://c1:8740 (epoch 3); 2 jobs running` or `registering: cannot reach the controller at
// http://c1:8740 (Connection refused)`. `systemctl status` prints it.
// Thread-safety: a plain function of its argument.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::agent {

struct AgentFacts {
  std::string server;       // --server as given (one controller or the list)
  std::string leader_url;   // the controller that last answered; empty: none yet
  bool registered = false;  // in the controller's current epoch
  bool connected = false;   // the last exchange reached a controller
  bool fenced = false;      // cut off for longer than the absence: its jobs were ended
  uint64_t epoch = 0;
  std::string unreachable;  // "URL: error" while a controller cannot be reached
  size_t running = 0;       // jobs running here
};

std::string AgentStatusLine(const AgentFacts& facts);

}  // namespace sluice::agent
