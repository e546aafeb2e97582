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
// With `"compact": true` the reply leaves out every host whose answer is 200 with nothing in it
// (no launch, kill, acknowledgement, run-limit or peek order): the agent reads a host it sent
// and does not find as that empty answer at the batch's epoch (its lease renewed). At 10,000
// hosts most hosts of most exchanges have nothing, and building, sending and parsing their
// empty answers was most of an exchange's cost. The order of the listed hosts is kept.
//
// Decoding the request is strict (the controller reads it from the network): unknown fields,
// a duplicate host, more than kMaxBatchHosts hosts, or a bad host part are kInvalidArgument
// naming the entry, e.g. `hosts[3].heartbeat.running: expected a list of job ids`.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
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
  bool compact = false;           // leave out the empty answers (above)
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

// Each sent host's entry of `reply`, in the order of `sent` (the request's hosts, then its
// polls): nullptr for a host the reply leaves out (a compact reply's empty answer). Entries
// come in request order, so one walk matches them; an entry whose name is not found further
// on is ignored.
std::vector<const BatchHostReply*> MatchBatchReply(const BatchHeartbeatReply& reply,
                                                   const std::vector<std::string_view>& sent);

}  // namespace sluice::wire
