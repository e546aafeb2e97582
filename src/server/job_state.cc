#include "server/job_state.h"

#include <algorithm>
#include <vector>

namespace sluice::server {
namespace {

// ToString of each value of `all` as a std::string, indexed by the value; made once per enum.
template <typename Enum, size_t N>
const std::string& TextOf(Enum value, const Enum (&all)[N]) {
  static const std::vector<std::string>* texts = [&all] {
    auto* t = new std::vector<std::string>();
    for (Enum e : all) {
      t->resize(std::max(t->size(), static_cast<size_t>(e) + 1));
      (*t)[static_cast<size_t>(e)] = std::string(ToString(e));
    }
    return t;
  }();
  return (*texts)[static_cast<size_t>(value)];
}

}  // namespace

const std::string& ToText(JobState state) { return TextOf(state, kAllJobStates); }

const std::string& ToText(core::AdmissionPhase phase) { return TextOf(phase, kAllAdmissionPhases); }

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
