// Loopback ports for the servers a test starts (etcd members, controllers).
#pragma once

#include <vector>

namespace sluice::testing {

// `n` distinct TCP ports the kernel had free on 127.0.0.1. Every socket is held until all n
// are chosen, so no two returned ports are equal; another process can still take one before
// the caller binds it, so callers that start servers on them retry with fresh ports.
// A failed bind yields 0 for that entry.
std::vector<int> FreeLoopbackPorts(int n);

}  // namespace sluice::testing
