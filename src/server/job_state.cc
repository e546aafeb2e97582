#include "server/job_state.h"

namespace sluice::server {

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
