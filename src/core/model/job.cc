#include "core/model/job.h"

namespace sluice::core {

std::string_view ToString(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "PENDING";
    case JobState::kHeld:
      return "HELD";
    case JobState::kAdmitting:
      return "ADMITTING";
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kDone:
      return "DONE";
    case JobState::kExit:
      return "EXIT";
    case JobState::kCancelled:
      return "CANCELLED";
  }
  return "UNKNOWN";
}

bool IsTerminal(JobState state) {
  return state == JobState::kDone || state == JobState::kExit || state == JobState::kCancelled;
}

std::string_view ToString(ExitCause cause) {
  switch (cause) {
    case ExitCause::kNone:
      return "NONE";
    case ExitCause::kNonZeroExit:
      return "NONZERO_EXIT";
    case ExitCause::kUnschedulable:
      return "UNSCHEDULABLE";
    case ExitCause::kRunLimit:
      return "RUN_LIMIT";
    case ExitCause::kHostLost:
      return "HOST_LOST";
  }
  return "UNKNOWN";
}

int32_t Allocation::TotalSlots() const {
  int32_t total = 0;
  for (const HostGrant& grant : hosts) total += grant.slots;
  return total;
}

}  // namespace sluice::core
