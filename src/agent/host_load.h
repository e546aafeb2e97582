// A host's load as its agent reports it with each heartbeat (issue 47.9, `lsload`'s r1m /
// r5m / r15m and free memory): read from /proc/loadavg and /proc/meminfo's MemAvailable.
// The controller shows it (GET /v1/hosts, the dashboard's host page); it does not schedule on
// it — slots and declared resources do.
#pragma once

#include <optional>
#include <string>

#include "wire/agent_protocol.h"

namespace sluice::agent {

// The load under `proc` (a test passes its own directory). Nothing when /proc/loadavg cannot
// be read; mem_available_mb stays unknown (-1) when meminfo has no MemAvailable line.
std::optional<wire::HostLoad> ReadHostLoad(const std::string& proc = "/proc");

}  // namespace sluice::agent
