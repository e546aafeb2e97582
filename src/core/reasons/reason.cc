#include "core/reasons/reason.h"

#include <utility>

namespace sluice::core {

std::string_view ToString(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNewJob:
      return "NEW_JOB";
    case ReasonCode::kHeld:
      return "HELD";
    case ReasonCode::kPriorityWait:
      return "PRIORITY_WAIT";
    case ReasonCode::kReserved:
      return "RESERVED";
    case ReasonCode::kNoResource:
      return "NO_RESOURCE";
  }
  return "INTERNAL";
}

std::string_view Headline(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNewJob:
      return "New job is waiting for its first scheduling cycle";
    case ReasonCode::kHeld:
      return "The job is held; release it to let it run";
    case ReasonCode::kPriorityWait:
      return "Waiting behind the queue's head job";
    case ReasonCode::kReserved:
      return "Free slots are reserved for the queue's head job";
    case ReasonCode::kNoResource:
      return "Not enough job slots";
  }
  return "Internal error while evaluating the job";
}

// Severity order, most severe last. HELD outranks everything: nothing else matters until
// the job is released. A job blocked by its own shape (NO_RESOURCE) is told that next; ordering waits (RESERVED, PRIORITY_WAIT) come below it; NEW_JOB is only ever
// alone.
int Severity(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNewJob:
      return 0;
    case ReasonCode::kPriorityWait:
      return 10;
    case ReasonCode::kReserved:
      return 20;
    case ReasonCode::kNoResource:
      return 30;
    case ReasonCode::kHeld:
      return 90;
  }
  return 100;
}

void PendingReasons::Add(ReasonDetail detail) {
  if (details.empty() || Severity(detail.code) > Severity(main)) main = detail.code;
  details.push_back(std::move(detail));
}

}  // namespace sluice::core
