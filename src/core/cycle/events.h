// Events in: everything that changes the cluster between cycles (R-ARCH-1).
//
// Drivers (server, simulator) turn the outside world into these values and Apply() them to
// the state; the store journals the same values. Apply is pure state transition: no I/O,
// no clock (the time of the event is passed in).
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "base/status.h"
#include "base/time.h"
#include "core/model/cluster_state.h"

namespace sluice::core {

struct JobSubmitted {
  JobSpec spec;
};
struct JobCancelled {
  JobId job = kNoJob;
};
struct JobFinished {
  JobId job = kNoJob;
  int32_t exit_code = 0;
  ExitCause cause = ExitCause::kNone;  // kRunLimit when killed at its limit
};
struct HostAdded {
  HostSpec host;
};
struct HostChanged {
  std::string host;
  HostState state = HostState::kOk;
};
// The host's agent was lost; the host becomes `unavail` (what happens to its jobs is the
// server's on_host_loss policy, applied as JobFinished/requeue events).
struct HostLost {
  std::string host;
};
struct ConfigChanged {
  ClusterConfig config;
};
// Hold and release (R-Q-3): a held job keeps its place in its queue and returns to it.
struct JobHeld {
  JobId job = kNoJob;
};
struct JobReleased {
  JobId job = kNoJob;
};
// An administrator opens/closes (submissions) or activates/inactivates (dispatch) a queue;
// unset fields stay as they are. Draining is closed and active (R-Q-1).
struct QueueChanged {
  std::string queue;
  std::optional<bool> open;
  std::optional<bool> active;
};

// A running job stopped without ending and returns to its queue at its original position:
// a preempted victim once it has exited (R-CAP-3), or a job on a lost host under
// on_host_loss: requeue (R-SRV-3).
struct JobRequeued {
  JobId job = kNoJob;
};

using Event = std::variant<JobSubmitted, JobCancelled, JobFinished, HostAdded, HostChanged,
                           HostLost, ConfigChanged, JobHeld, JobReleased, QueueChanged, JobRequeued>;

// Applies one event at time `now`. On error the state is unchanged and the Status says
// which event was refused and why (unknown job, duplicate id, ...). A submission is refused
// with kFailedPrecondition when its queue is closed, and with kNotFound when its dependency
// names a job that does not exist (LSF rejects such a `bsub -w` too).
Status Apply(const Event& event, Instant now, ClusterState& state);

}  // namespace sluice::core
