// Events in: everything that changes the cluster between cycles (R-ARCH-1).
//
// Drivers (server, simulator) turn the outside world into these values and Apply() them to
// the state; the store journals the same values. Apply is pure state transition: no I/O,
// no clock (the time of the event is passed in).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "core/model/cluster_state.h"

namespace sluice::core {

struct JobSubmitted {
  JobSpec spec;
  // A job array (R-UX-3): its indices and cap, e.g. "1-1000%50" (job_array.h); empty for a
  // plain job. Kept out of JobSpec so that a plain job's record does not grow.
  std::string array;
};
struct JobCancelled {
  JobId job = kNoJob;
};
struct JobFinished {
  JobId job = kNoJob;
  int32_t exit_code = 0;
  ExitCause cause = ExitCause::kNone;  // kRunLimit when killed at its limit
  // The job waits (PENDING or HELD): its run, requeued when its host was lost, was reported
  // ended by that host before it ran again (issue 44). Without it a waiting job is refused.
  bool lost_run = false;
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
// The advance reservations are now these (R-RSV-1): the whole set, replacing the last one
// (recurring ones expanded into their next windows by the driver). Refused whole, as
// ReservationBook::Set says.
struct ReservationsChanged {
  std::vector<AdvanceReservationSpec> reservations;
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

// --- Server restart and retention (R-SRV-2). Only the controller sends these. ---

// A job the store holds unfinished, taken in through the submission path (same checks, same
// request compilation) with the enqueue sequence and admission record it was stored with.
struct JobRestored {
  JobSpec spec;
  uint64_t seq = 0;
  AdmissionRecord record;
};
// A restored job held this allocation when it was stored (ADMITTING or RUNNING since
// `start_time`): it holds it again. `preempted_for` (kNoJob: none) restores a preemption in
// progress, so that the victim keeps being stopped for the same job.
struct AllocationRestored {
  JobId job = kNoJob;
  Allocation allocation;
  Instant start_time = 0;
  JobId preempted_for = kNoJob;
};
// A job that ended before this restart and is not restored into the table: dependencies that
// name it keep its verdict. `started`: it had started at some point (done/ended atoms).
struct EndedJobNoted {
  JobId job = kNoJob;
  JobState state = JobState::kDone;
  bool started = false;
};
// A queue's reclaim deadline as it was stored (a restart gives no new grace, R-CAP-3).
struct ReclaimDeadlineRestored {
  QueueIndex queue = 0;
  std::optional<Instant> deadline;
};
// An ended job leaves the table (the server's retention); only its outcome stays for
// dependencies.
struct JobForgotten {
  JobId job = kNoJob;
};
// A job submitted but never acknowledged (a refused batch) leaves as if never submitted.
struct JobWithdrawn {
  JobId job = kNoJob;
};

// --- Changes to a job in place (R-UX-7, issue 17; ClusterState's job_changes.cc). ---

// A PENDING or HELD job's spec is replaced (`sluice modify`): it is classified again and
// keeps its sequence and admission record, unless its queue changes: then it goes to the end
// of the new queue with a fresh record. The spec's `hold` is ignored (held stays held).
struct JobModified {
  JobSpec spec;
};
// An ADMITTING or RUNNING job's run limit changes (an administrator's `sluice modify -W`).
struct RunLimitChanged {
  JobId job = kNoJob;
  std::optional<Duration> run_limit;
};
// An ended job (in the table or only noted as ended) pends again under the same id at
// `seq`, with a fresh admission record (`sluice requeue` of an ended job).
struct JobRevived {
  JobSpec spec;
  uint64_t seq = 0;
};

// --- Job arrays (R-UX-3). A whole array or one element `ID[I]` is cancelled, held or
// released by JobCancelled/JobHeld/JobReleased with the array's or the element's id; these
// name a range of indices. ---

// The elements of `array` with an index in [first, last].
struct ArrayElementsCancelled {
  JobId array = kNoJob;
  int32_t first = 0;
  int32_t last = 0;
};
struct ArrayElementsHeld {
  JobId array = kNoJob;
  int32_t first = 0;
  int32_t last = 0;
  bool held = true;  // false: released
};
// A controller restart: an array and its elements' stored states (ClusterState::RestoreArray).
struct ArrayRestored {
  JobSpec spec;
  std::string array;
  uint64_t base_seq = 0;
  std::vector<ElementState> states;
};

using Event = std::variant<JobSubmitted, JobCancelled, JobFinished, HostAdded, HostChanged,
                           HostLost, ConfigChanged, JobHeld, JobReleased, QueueChanged, JobRequeued,
                           JobRestored, AllocationRestored, EndedJobNoted, ReclaimDeadlineRestored,
                           JobForgotten, JobWithdrawn, ArrayElementsCancelled, ArrayElementsHeld,
                           ArrayRestored, JobModified, RunLimitChanged, JobRevived,
                           ReservationsChanged>;

// Applies one event at time `now`. On error the state is unchanged and the Status says
// which event was refused and why (unknown job, duplicate id, ...). A submission is refused
// with kFailedPrecondition when its queue is closed, and with kNotFound when its dependency
// names a job that does not exist (LSF rejects such a `bsub -w` too). AllocationRestored is
// refused with kNotFound for an unknown job and kFailedPrecondition when the job is not
// pending or the allocation does not fit the hosts that accept work now (the configuration
// changed under it: the server requeues it). EndedJobNoted, JobForgotten and JobWithdrawn
// fail as ClusterState::NoteEnded, Forget and Withdraw say; JobModified, RunLimitChanged and
// JobRevived as ClusterState::Modify, SetRunLimit and Revive say.
Status Apply(const Event& event, Instant now, ClusterState& state);
// The same, moving the event's JobSpec (a submission, restore, change or revival) into the
// job table instead of copying it: for a driver that does not use the event afterwards (the
// simulator's replay submits 200,000 specs). The resulting state is the same.
Status Apply(Event&& event, Instant now, ClusterState& state);

}  // namespace sluice::core
