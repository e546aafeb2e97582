// The states a job shows through the API (docs/api.md) and the phases of its stored
// admission record, as enums; their text is what the API and the store hold.
//
// JobState is the core's (core::JobState, one enum and one string table): ADMITTING is the
// server's, set while the agent has not yet reported a start (R-SRV-2).
// The admission phase is core::AdmissionPhase (PENDING, ADMITTING, ADMITTED, ENDED).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/model/job.h"

namespace sluice::server {

using JobState = core::JobState;
using core::ToString;

inline constexpr JobState kAllJobStates[] = {
    JobState::kPending, JobState::kHeld, JobState::kAdmitting, JobState::kRunning,
    JobState::kDone,    JobState::kExit, JobState::kCancelled};
inline constexpr core::AdmissionPhase kAllAdmissionPhases[] = {
    core::AdmissionPhase::kPending, core::AdmissionPhase::kAdmitting,
    core::AdmissionPhase::kAdmitted, core::AdmissionPhase::kEnded};

// ToString(state) and ToString(phase) as strings, each made once: listings, counts and
// messages read them for every job.
const std::string& ToText(JobState state);
const std::string& ToText(core::AdmissionPhase phase);

// The state named by `text` (as ToString writes it); nullopt for any other text.
std::optional<JobState> ParseJobState(std::string_view text);
// The phase named by `text` (as core::ToString(AdmissionPhase) writes it); nullopt otherwise.
std::optional<core::AdmissionPhase> ParseAdmissionPhase(std::string_view text);

// PENDING or HELD: the job waits in its queue.
inline bool IsWaiting(JobState state) {
  return state == JobState::kPending || state == JobState::kHeld;
}

// The core's terminal state for an ended job's state (DONE, CANCELLED, else EXIT).
core::JobState CoreEndedState(JobState state);

}  // namespace sluice::server
