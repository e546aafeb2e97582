// Requests above a policy maximum can never run (R-ADM-1): a job asking more slots than its
// queue's slot limit or max_capacity, or more than a named limit that applies to it allows.
//
// ExceedsPolicyLimits returns the message for the first maximum the job's smallest
// alternative exceeds, or nullopt. Only limits whose scope covers the job without looking
// at hosts are checked (users, queues, projects; a host-scoped limit needs a placement).
#pragma once

#include <optional>
#include <string>

#include "core/model/cluster_state.h"

namespace sluice::core {

std::optional<std::string> ExceedsPolicyLimits(const Job& job, const ClusterState& state);

}  // namespace sluice::core
