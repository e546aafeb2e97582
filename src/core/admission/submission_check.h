// Refusal at submission (R-UX-2): the static check of R-ADM-1 and the policy maxima, asked of
// a job before it is submitted, so that a job no host and no queue could ever satisfy is
// refused with its cause instead of being stored and ended EXIT UNSCHEDULABLE by the next
// cycle. It uses the same two pieces as the cycle's classification (Scheduler::
// ClassifyNewJobs): Allocator::CheckFeasible against every configured host, whatever its
// state, then ExceedsPolicyLimits; so the refusal and a later EXIT UNSCHEDULABLE (after a
// reconfiguration) say the same words. The core's classification itself is unchanged: the
// simulator still replays an impossible job as an `exit` decision (R-SIM-4).
// Thread-safety: not thread-safe (compiling a request interns it in `state`).
// Implements R-UX-2 (the check; the server answers 422).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/alloc/allocator.h"
#include "core/alloc/capacity.h"
#include "core/model/cluster_state.h"
#include "core/model/job.h"
#include "core/reasons/reason.h"

namespace sluice::core {

struct NeverRunnable {
  std::string message;     // as the cycle's FailJob message: "asks 100 tasks; ... can hold 16"
  PendingReasons reasons;  // the shortfalls behind it; empty for a policy maximum
};

// One submission's check (a single job or a whole batch). Representation: the capacity of
// every configured host, built on first use, and a memo of verdicts by request, queue,
// exclusive and task range (the feasibility part does not depend on the user), so a batch of
// 100,000 alike jobs costs one allocator call. Lives while `state` does not change.
class SubmissionCheck {
 public:
  SubmissionCheck(ClusterState& state, const Allocator& allocator)
      : state_(state), allocator_(allocator) {}

  // Why a job of `spec` (its user, project, queue, tasks, resreq, exclusive) could never run
  // on this cluster, or nullopt when it could. A spec whose queue or request does not compile
  // is not judged here (nullopt): the submission's own checks refuse it naming the field.
  std::optional<NeverRunnable> Check(const JobSpec& spec);

 private:
  ClusterState& state_;
  const Allocator& allocator_;
  std::optional<Capacity> all_configured_;
  std::map<RequestCatalog::FeasibilityKey, std::optional<NeverRunnable>> memo_;
};

}  // namespace sluice::core
