// "What would let it start": one sentence per pending job, derived from its main reason and
// the state, that a user can act on (issue 6). Examples:
//   needs 6 more slots on hosts with type==linux
//   limit 'u_slots' 8/8 slots for user alice — starts when one of its 3 running jobs ends
//   waits for job 1041 (queue head) to start first
//   released by `sluice release 7`
// Pure: reads the job, its reasons and the state (running jobs, queue hosts), never the
// clock; the server returns the same text as the JSON field `hint`.
// Implements the "what would let it start" part of R-PR-2.
#pragma once

#include <string>

#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"

namespace sluice::core {

// The hint for `job` pending with `reasons` (built from the first detail of the main code).
// Never empty.
std::string Hint(const Job& job, const ClusterState& state, const PendingReasons& reasons);

// Running jobs that a limit scope such as "user alice", "queue normal", "project p1" or
// "host h001" counts; -1 when the scope is empty or of a kind this function does not know.
int64_t RunningJobsInScope(const ClusterState& state, const std::string& scope);

}  // namespace sluice::core
