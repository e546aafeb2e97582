// The batched heartbeat of the agent protocol (docs/api.md, "Agents"): one request carries the
// heartbeats of many hosts that one agent process serves (virtual hosts, R-SCALE-1), and one
// reply carries each host's answer. Each host's part is exactly the single-host message
// (wire/agent_protocol.h), so a host's reports, launches, kills and acknowledgements mean the
// same through either route; only the long poll is shared: the reply comes when any listed
// host has work, or after `wait_ms`.
//
// POST /v1/agents/heartbeats
//   {"wait_ms": W, "hosts": [{"name": "vh00001", "heartbeat": {<heartbeat body>}}, ...],
//    "poll": ["vh00002", ...], "instance": "<agent instance>"}
// ->{"epoch": E, "hosts": [{"name": "vh00001", "status": 200, "reply": {<heartbeat reply>}},
//                          {"name": "vh00002", "status": 404, "error": "..."}, ...]}
// A host's status is what its single heartbeat would have answered (404: register first; 409:
// stale epoch or another instance). A host under `poll` has nothing to report since its last
// heartbeat: it only renews its lease and waits for work (a heartbeat without reports whose
// running jobs are as last said; `instance` is its registered instance). The reply lists the
// `hosts` first, then the `poll` hosts, each in request order.
//
// Decoding the request is strict (the controller reads it from the network): unknown fields,
// a duplicate host, more than kMaxBatchHosts hosts, or a bad host part are kInvalidArgument
// naming the entry, e.g. `hosts[3].heartbeat.running: expected a list of job ids`.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "wire/agent_protocol.h"

namespace sluice::wire {

inline constexpr size_t kMaxBatchHosts = 20'000;

struct BatchHeartbeatRequest {
  int64_t wait_ms = 0;  // decoded clamped to [0, kMaxWaitMs]; the hosts' own wait_ms is unused
  std::vector<std::pair<std::string, HeartbeatRequest>> hosts;
  std::vector<std::string> poll;  // hosts with nothing to report (at most kMaxBatchHosts)
  std::string instance;           // of the `poll` hosts
};

struct BatchHostReply {
  std::string name;
  int status = 200;
  std::string error;     // status != 200
  HeartbeatReply reply;  // status == 200
};

struct BatchHeartbeatReply {
  uint64_t epoch = 0;
  std::vector<BatchHostReply> hosts;
};

nlohmann::json EncodeBatchHeartbeat(const BatchHeartbeatRequest& request);
Result<BatchHeartbeatRequest> DecodeBatchHeartbeat(const nlohmann::json& body);

// The controller builds each host's reply as JSON (AgentRegistry); the agent decodes it.
// Errors: a host without a name or status, or a host reply DecodeHeartbeatReply refuses.
Result<BatchHeartbeatReply> DecodeBatchHeartbeatReply(const nlohmann::json& body);

}  // namespace sluice::wire
