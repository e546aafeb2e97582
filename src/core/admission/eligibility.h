// Eligibility: whether a pending job may be tried at all now, for reasons of its own or of
// its queue's calendar rather than of resources or limits (R-Q-1, R-Q-3):
//   HELD          held by its owner or an administrator
//   DEPENDENCY    its dependency expression is waiting, or can never be satisfied (`never`,
//                 with the deciding condition; the job stays pending and says so)
//   BEGIN_TIME    its begin time has not come
//   QUEUE_WINDOW  its queue's dispatch windows are closed (time: when one opens next)
//   ARRAY_LIMIT   an array element beyond its array's `%N` cap (Job::array_limited, R-UX-3)
//   RESERVATION_WAIT  a job inside an advance reservation whose window is not open, or
//                 which no longer exists (R-RSV-2; time: its next window's begin)
//   RESERVATION_DENIED  a job inside an advance reservation that does not admit its user
//                 (ReservationBook::Admits)
// Every mechanism that applies adds its detail; the main reason follows severity
// (reason.h). An ineligible job is skipped, never a queue head (R-ADM-2), and is not
// runnable pending work for capacity lending (R-CAP-1).
//
// Cost: O(1) per job and cycle: the dependency verdict is kept by ClusterState and
// re-evaluated only when a job it names changes state; windows are compiled per queue.
// Pure: reads the state and `now` only. Implements R-Q-1 (windows), R-Q-3.
#pragma once

#include <optional>

#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"

namespace sluice::core {

// The reasons that keep `job` (PENDING or HELD) from being tried at `now`, or nullopt.
std::optional<PendingReasons> CheckEligibility(const Job& job, const ClusterState& state,
                                               Instant now);
// The same test without building reasons (for capacity's "runnable pending work").
bool IsEligible(const Job& job, const ClusterState& state, Instant now);

// The next time eligibility changes by the clock alone, for the cycle's wake_at: the
// earliest future begin time, the next advance reservation window boundary while jobs
// wait, and the next opening of a closed queue that holds a job
// which only the window keeps waiting. A queue whose waiting jobs are all held or blocked
// by dependencies asks for no timer (their release is an event), so a simulation ends.
std::optional<Instant> NextEligibilityTimer(const ClusterState& state, Instant now);

}  // namespace sluice::core
