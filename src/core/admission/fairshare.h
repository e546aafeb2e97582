// Fairshare within a queue (R-Q-4), as LSF's queue-level fairshare: each user's dynamic
// priority is
//     priority = shares / (1 + usage)
// where `shares` come from the queue's `fairshare` map ("default" for users not listed, 1
// without it) and `usage`, in slot-hours, is the user's decayed past usage in the queue
// (half-life `fairshare_half_life`) plus the slot-seconds its running jobs have run so far,
// plus one slot-hour per slot it runs now (LSF's run-job factor: a dispatch lowers the
// user's priority at once, so users with equal shares alternate).
//
// The cycle walks a fairshare queue in this order: repeatedly the next job (in queue order)
// of the user with the highest priority (ties: user name), charging that job's slots to the
// user as if it starts. The order is computed once per cycle; policies then apply as usual.
// Cost: O(pending × log users) per cycle for a fairshare queue, O(running) to count usage.
#pragma once

#include <string>

#include "core/admission/queue_order.h"
#include "core/model/cluster_state.h"

namespace sluice::core {

// The cycle's walking order of a fairshare queue.
QueueOrder FairshareOrder(const Queue& queue, const ClusterState& state, Instant now);

}  // namespace sluice::core
