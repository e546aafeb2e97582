// VirtualAgent: `sluice agent --virtual RANGE` (R-SCALE-1): one process serves thousands of
// hosts for scale tests. Each host registers and heartbeats through the real agent protocol
// (POST /v1/agents/register, and the batched heartbeat of wire/agent_batch.h that carries
// the same per-host messages), is leased, launched on, killed and fenced as a real agent's
// host is; its jobs run no process (virtual_host.h: they "run" on timers).
//
// Representation: the hosts are split into `connections` shards; each shard has one thread
// and one keep-alive HTTP connection, and owns its hosts (no lock). A shard's loop: register
// the hosts that need it, end due jobs, then one batched heartbeat for all its registered
// hosts, whose long poll waits at most until the shard's next timer (a job end or a lease
// deadline) and at least `min_gap` after the previous exchange, so ends and starts are
// reported together. A host with nothing new to say is only polled (wire/agent_batch.h), its
// running jobs said again every 10 s, so the controller reads what changed, not every job of
// every host in every exchange.
// NOTE: it follows one controller (the first of --server); failover is the real agent's.
// Thread-safety: Run is called once; the shards share only `stop` and the counters.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace sluice::agent {

struct VirtualAgentOptions {
  std::vector<std::string> hosts;  // expanded names
  int slots = 16;                  // of a host the controller does not know
  std::string server;
  std::string token;  // the agent token (MUNGE is the real agent's)
  std::string ca_file;
  int connections = 8;  // shards: threads and HTTP connections
  std::chrono::milliseconds min_gap{50};
  std::chrono::seconds stats_every{10};  // log a line of counts this often (0: never)
};

// Runs until `stop`; then ends every job (killed) and reports them once, best effort.
// Returns 0, 1 if the controller refuses the token (401/403), 2 on bad options.
int RunVirtualAgent(const VirtualAgentOptions& options, const std::atomic<bool>& stop);

}  // namespace sluice::agent
