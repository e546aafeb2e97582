#include "core/reasons/reason.h"

#include <utility>

namespace sluice::core {

std::string_view ToString(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNewJob:
      return "NEW_JOB";
    case ReasonCode::kHeld:
      return "HELD";
    case ReasonCode::kBeginTime:
      return "BEGIN_TIME";
    case ReasonCode::kQueueInactive:
      return "QUEUE_INACTIVE";
    case ReasonCode::kQueueRunLimit:
      return "QUEUE_RUNLIMIT";
    case ReasonCode::kPriorityWait:
      return "PRIORITY_WAIT";
    case ReasonCode::kReserved:
      return "RESERVED";
    case ReasonCode::kGated:
      return "GATED";
    case ReasonCode::kNoResource:
      return "NO_RESOURCE";
    case ReasonCode::kNoMatch:
      return "NO_MATCH";
    case ReasonCode::kSharedResource:
      return "SHARED_RESOURCE";
    case ReasonCode::kExclusive:
      return "EXCLUSIVE";
    case ReasonCode::kHostClosed:
      return "HOST_CLOSED";
    case ReasonCode::kHostUnavail:
      return "HOST_UNAVAIL";
    case ReasonCode::kDependency:
      return "DEPENDENCY";
    case ReasonCode::kQueueWindow:
      return "QUEUE_WINDOW";
    case ReasonCode::kQueueCapacity:
      return "QUEUE_CAPACITY";
    case ReasonCode::kUserLimit:
      return "USER_LIMIT";
    case ReasonCode::kLimit:
      return "LIMIT";
    case ReasonCode::kHostLimit:
      return "HOST_LIMIT";
    case ReasonCode::kFairshare:
      return "FAIRSHARE";
    case ReasonCode::kPreempting:
      return "PREEMPTING";
    case ReasonCode::kDispatchFailed:
      return "DISPATCH_FAILED";
    case ReasonCode::kInternal:
      return "INTERNAL";
    case ReasonCode::kArrayLimit:
      return "ARRAY_LIMIT";
    case ReasonCode::kHostReserved:
      return "HOST_RESERVED";
    case ReasonCode::kReservationWait:
      return "RESERVATION_WAIT";
    case ReasonCode::kReservationDenied:
      return "RESERVATION_DENIED";
  }
  return "UNKNOWN";
}

std::string_view Headline(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNewJob:
      return "New job is waiting for its first scheduling cycle";
    case ReasonCode::kHeld:
      return "The job is held; release it to let it run";
    case ReasonCode::kBeginTime:
      return "The job's begin time has not come yet";
    case ReasonCode::kQueueInactive:
      return "The queue is inactive and dispatches no job";
    case ReasonCode::kQueueRunLimit:
      return "The queue's run limit is reached";
    case ReasonCode::kPriorityWait:
      return "Waiting behind the queue's head job";
    case ReasonCode::kReserved:
      return "Free slots are reserved for the queue's head job";
    case ReasonCode::kGated:
      return "Waiting behind the queue's head job, whose aging gate is active";
    case ReasonCode::kNoResource:
      return "Not enough job slots";
    case ReasonCode::kNoMatch:
      return "Host does not satisfy the job's select[] requirement";
    case ReasonCode::kSharedResource:
      return "Not enough shared resource";
    case ReasonCode::kExclusive:
      return "Exclusive job needs an idle host; the host runs other jobs";
    case ReasonCode::kHostClosed:
      return "Host is closed or draining";
    case ReasonCode::kHostUnavail:
      return "Host is unavailable";
    case ReasonCode::kDependency:
      return "The job's dependency condition is not satisfied";
    case ReasonCode::kQueueWindow:
      return "The queue's dispatch window is closed";
    case ReasonCode::kQueueCapacity:
      return "The queue is at its maximum capacity";
    case ReasonCode::kUserLimit:
      return "The user holds the queue's minimum user share while other users wait";
    case ReasonCode::kLimit:
      return "A limit is reached";
    case ReasonCode::kHostLimit:
      return "A per-host limit is reached";
    case ReasonCode::kFairshare:
      return "Users with a higher fairshare priority go first";
    case ReasonCode::kPreempting:
      return "Slots are being freed for the job; waiting for preempted jobs to exit";
    case ReasonCode::kDispatchFailed:
      return "The job could not be launched; it will be retried";
    case ReasonCode::kInternal:
      return "Internal error while evaluating the job";
    case ReasonCode::kArrayLimit:
      return "The job array runs as many elements as its %N limit allows";
    case ReasonCode::kHostReserved:
      return "Host is reserved by an advance reservation the job would run into";
    case ReasonCode::kReservationWait:
      return "The job's advance reservation is not open";
    case ReasonCode::kReservationDenied:
      return "The job's user may not run jobs in its advance reservation";
  }
  return "Unknown reason";
}

// Severity order (docs/design/cycle.md). INTERNAL (a bug) outranks everything; then HELD:
// nothing else matters until the job is released; then an advance reservation that does not
// admit the job's user (RESERVATION_DENIED: only an administrator or a change of the job helps),
// a dependency, an inactive queue, a closed window, an advance reservation not open
// (RESERVATION_WAIT), a begin time not reached, the queue's run limit, an array's `%N` cap
// (ARRAY_LIMIT), a named limit, the
// queue's minimum user share and its maximum capacity, which keep a job from even being
// tried. HOST_LIMIT ranks just below a resource shortage (the shortage would remain). Among
// allocation reasons the main one describes the hosts that could otherwise run the job: a shortage
// of a shared resource first (no host helps), then of slots or resources on matching hosts, then
// matching hosts that are busy for an exclusive job, closed, reserved by an advance reservation
// (HOST_RESERVED) or unavailable, and only then hosts
// that do not match at all (a job is told NO_MATCH as its main reason only when no host matches).
// GATED (hosts held for a gated head) ranks with the host states. Ordering waits (PREEMPTING,
// RESERVED, FAIRSHARE, PRIORITY_WAIT) come below; DISPATCH_FAILED (retried) and NEW_JOB last.
int Severity(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNewJob:
      return 0;
    case ReasonCode::kPriorityWait:
      return 10;
    case ReasonCode::kReserved:
      return 20;
    case ReasonCode::kGated:
      return 37;
    case ReasonCode::kNoMatch:
      return 30;
    case ReasonCode::kHostUnavail:
      return 34;
    case ReasonCode::kHostClosed:
      return 36;
    case ReasonCode::kExclusive:
      return 38;
    case ReasonCode::kNoResource:
      return 40;
    case ReasonCode::kSharedResource:
      return 50;
    case ReasonCode::kQueueRunLimit:
      return 60;
    case ReasonCode::kBeginTime:
      return 70;
    case ReasonCode::kQueueInactive:
      return 80;
    case ReasonCode::kHeld:
      return 90;
    case ReasonCode::kFairshare:
      return 12;
    case ReasonCode::kPreempting:
      return 25;
    case ReasonCode::kHostLimit:
      return 39;
    case ReasonCode::kQueueCapacity:
      return 55;
    case ReasonCode::kUserLimit:
      return 57;
    case ReasonCode::kLimit:
      return 58;
    case ReasonCode::kQueueWindow:
      return 75;
    case ReasonCode::kDependency:
      return 85;
    case ReasonCode::kDispatchFailed:
      return 5;
    case ReasonCode::kInternal:
      return 100;
    case ReasonCode::kArrayLimit:
      return 59;
    case ReasonCode::kHostReserved:
      return 35;
    case ReasonCode::kReservationWait:
      return 74;
    case ReasonCode::kReservationDenied:
      return 87;
  }
  return 100;
}

const std::vector<ReasonDetail>& ReasonDetails::Empty() {
  static const std::vector<ReasonDetail> empty;
  return empty;
}

void ReasonDetails::push_back(ReasonDetail detail) {
  if (shared_ == nullptr) {
    shared_ = std::make_shared<std::vector<ReasonDetail>>();
  } else if (shared_.use_count() > 1) {
    shared_ = std::make_shared<std::vector<ReasonDetail>>(*shared_);  // copy on write
  }
  shared_->push_back(std::move(detail));
}

void PendingReasons::Add(ReasonDetail detail) {
  if (details.empty() || Severity(detail.code) > Severity(main)) main = detail.code;
  details.push_back(std::move(detail));
}

}  // namespace sluice::core
