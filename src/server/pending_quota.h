// Pending-job quotas at submission (issue 19: "any user can fill it"), from the `quotas:`
// section of the cluster YAML (config/quota_yaml.h): a user's waiting jobs (pending or held)
// in all queues together (`max_pending_per_user`), and per queue every user's
// (`queues.Q.max_pending`) and one user's (`queues.Q.max_pending_per_user`). A submission
// that would go beyond one is refused whole, nothing stored and no id taken, with a Refusal
// kOverQuota (HTTP 429) naming the limit and the counts:
//   {"error": "jobs: queue 'normal' would hold 1002 waiting jobs of alice; its
//              max_pending_per_user is 1000 (1000 wait, this submission adds 2)",
//    "cause": {"reason": "QUOTA", "queue": "normal", "limit": "max_pending_per_user",
//              "max": 1000, "waiting": 1000, "adding": 2}}
// (`queue` is null for the cluster-wide per-user quota). An array counts as its elements,
// as in LSF: the one submitted adds each index, and a stored one's waiting or held elements
// wait. Counting walks the waiting jobs of the queues concerned and the arrays, only when a
// quota is set. Apart from the job quotas, and always set, `max_array_elements_per_user` caps
// one user's array elements that are not jobs yet (issue 48): a submission holding an array
// walks the arrays to count them (cause limit "max_array_elements_per_user", queue null).
// Thread-safety: REQUIRES the context's mutex held.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/cluster_yaml.h"
#include "core/model/cluster_state.h"
#include "server/outcome.h"

namespace sluice::server {

// `specs` are normalized (ParseSubmission); a spec naming an unknown queue is left to the
// submission's own checks. Returns the refusal, or nullopt.
// The jobs one submission adds: 1, or an array's elements (each is a job to the quotas).
int64_t JobsOf(const nlohmann::json& spec);

std::optional<Refusal> CheckPendingQuota(const config::Quotas& quotas,
                                         const core::ClusterState& state, const std::string& user,
                                         const std::vector<nlohmann::json>& specs, bool batch);

}  // namespace sluice::server
