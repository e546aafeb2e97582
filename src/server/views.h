// The JSON objects of the user API (docs/api.md): a job (listing entry and detail), a host
// and a queue, read from the job book and the core under the controller's lock.
//
// The text of a job object is written by wire/job_json.h (one source of truth for listings and
// detail); this file only gathers its fields and adds the detail's admission section.
// Thread-safety: every function REQUIRES the context's mutex held (they read the core).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/model/cluster_state.h"
#include "server/job_book.h"
#include "wire/agent_protocol.h"
#include "wire/job_json.h"

namespace sluice::server {

// A job's listing fields, copied under the lock (wire/job_json.h); with reasons and a hint when
// `with_reasons` and the job waits. `book` holds `job` (its estimate, JobBook::EstimateOf).
wire::JobListEntry ListEntryOf(const JobInfo& job, const JobBook& book,
                               const core::ClusterState& state, bool with_reasons);
// The job object; `detail` adds the pending reasons and the admission section (at `now`).
nlohmann::json JobJson(const JobInfo& job, const JobBook& book, const core::ClusterState& state,
                       Instant now, bool detail);
// What a host object shows of its agent: connected or not, last heartbeat (seconds).
struct AgentView {
  bool registered = false;
  bool connected = false;
  int64_t last_heartbeat_ms = 0;
  std::string closed_reason;   // why the controller closed the host itself (launch failures)
  std::string health_failure;  // its failing health check's message (R-OPS-4); "" passes
  std::optional<wire::HostLoad> load;  // the agent's last report (agent/host_load.h)
  bool restarting = false;             // its agent said it stops for a restart (issue 43)
};
// A host as GET /v1/hosts lists it; `used_resources` (issue 47.9) names what its running jobs
// hold of each consumable it has (`topology` names them).
nlohmann::json HostJson(const core::Host& host, const core::Topology& topology,
                        const AgentView& agent);
// Why a closed host is closed, as HostJson's `reason` says it: "health check: <message>"
// first, then the controller's own reason; "" when neither.
std::string ClosedReason(const AgentView& agent);
// Adds `reason` (ClosedReason) to the per-host verdicts of a job object's pending reasons
// (`reasons.hosts[]`, JobJson's detail) whose host is closed with one.
void AddClosedReasons(nlohmann::json& job,
                      const std::function<std::string(const std::string& host)>& reason_of);
// A queue as GET /v1/queues lists it; its pending and held jobs from `counts` (the book's,
// with each array element a job, as the dashboard's overview counts them).
nlohmann::json QueueJson(const core::Queue& queue, const JobCounts& counts);
nlohmann::json LimitsJson(const core::ClusterState& state);

}  // namespace sluice::server
