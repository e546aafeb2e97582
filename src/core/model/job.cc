#include "core/model/job.h"

#include "core/resreq/fingerprint.h"

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

std::string_view ToString(AdmissionPhase phase) {
  switch (phase) {
    case AdmissionPhase::kPending:
      return "PENDING";
    case AdmissionPhase::kAdmitting:
      return "ADMITTING";
    case AdmissionPhase::kAdmitted:
      return "ADMITTED";
    case AdmissionPhase::kEnded:
      return "ENDED";
  }
  return "UNKNOWN";
}

uint64_t SpecDigest(const JobSpec& spec) {
  resreq::Fingerprinter f;
  f.I64(spec.id).Text(spec.name).Text(spec.user).Text(spec.project).Text(spec.queue);
  f.Text(spec.command).Text(spec.resreq).I64(spec.min_tasks).I64(spec.max_tasks);
  f.I64(spec.run_limit.value_or(-1)).I64(spec.priority).I64(spec.submit_time);
  f.I64(spec.begin_time).Text(spec.depend).Byte(spec.exclusive).Byte(spec.hold);
  return f.Finish();
}

int32_t Allocation::TotalSlots() const {
  int32_t total = 0;
  for (const HostGrant& grant : hosts) total += grant.slots;
  return total;
}

}  // namespace sluice::core
