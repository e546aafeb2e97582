#include "server/job_state.h"

namespace sluice::server {

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

std::optional<JobState> ParseJobState(std::string_view text) {
  for (JobState state : kAllJobStates) {
    if (ToString(state) == text) return state;
  }
  return std::nullopt;
}

std::optional<core::AdmissionPhase> ParseAdmissionPhase(std::string_view text) {
  for (core::AdmissionPhase phase : kAllAdmissionPhases) {
    if (core::ToString(phase) == text) return phase;
  }
  return std::nullopt;
}

core::JobState CoreEndedState(JobState state) {
  if (state == JobState::kDone) return core::JobState::kDone;
  if (state == JobState::kCancelled) return core::JobState::kCancelled;
  return core::JobState::kExit;
}

}  // namespace sluice::server
