// `sluice bench --estimate`: the cost of one refresh of the controller's estimated starts
// (R-UX-8, server/estimates.h) on the bench's synthetic state: the Clone() taken under the
// controller's lock, and the forecast's CPU (core/driver/forecast.h). docs/performance.md.
#pragma once

#include "core/model/cluster_state.h"

namespace sluice::cli {

// Commits one cycle at `now` (the state a controller holds after its cycle), then times
// `runs` refreshes; prints a table or JSON. Returns the exit code.
int RunEstimateBench(core::ClusterState state, Instant now, int runs, bool json,
                     double coarse_fraction);

}  // namespace sluice::cli
