#include "core/model/job.h"

#include <bit>
#include <cstddef>

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

namespace {

// The spec digest, eight bytes at a time (every submission computes one, so a byte-wise
// hash was ~4 % of a trace replay). Deterministic: values and text are read as
// little-endian words, strings are length-prefixed, and the state is mixed with
// multiplications and rotations only (no std::hash, no addresses).
class WordDigest {
 public:
  WordDigest& Word(uint64_t word) {
    state_ = std::rotl((state_ ^ word) * kMul, 29);
    return *this;
  }
  WordDigest& Text(std::string_view text) {
    Word(text.size());
    size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) Word(LoadLittleEndian(text.data() + i, 8));
    if (i < text.size()) Word(LoadLittleEndian(text.data() + i, text.size() - i));
    return *this;
  }
  uint64_t Finish() const {  // the SplitMix64 finalizer
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static uint64_t LoadLittleEndian(const char* bytes, size_t n) {
    uint64_t word = 0;
    for (size_t i = 0; i < n; ++i)
      word |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
    return word;
  }
  static constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  uint64_t state_ = 14695981039346656037ULL;
};

}  // namespace

uint64_t SpecDigest(const JobSpec& spec) {
  WordDigest d;
  d.Word(static_cast<uint64_t>(spec.id)).Text(spec.name).Text(spec.user).Text(spec.project);
  d.Text(spec.queue).Text(spec.command).Text(spec.resreq);
  d.Word(static_cast<uint64_t>(spec.min_tasks)).Word(static_cast<uint64_t>(spec.max_tasks));
  d.Word(static_cast<uint64_t>(spec.run_limit.value_or(-1)))
      .Word(static_cast<uint64_t>(spec.priority));
  d.Word(static_cast<uint64_t>(spec.submit_time)).Word(static_cast<uint64_t>(spec.begin_time));
  d.Text(spec.depend).Word((spec.exclusive ? 1u : 0u) | (spec.hold ? 2u : 0u));
  return d.Finish();
}

int32_t Allocation::TotalSlots() const {
  int32_t total = 0;
  for (const HostGrant& grant : hosts) total += grant.slots;
  return total;
}

int32_t Allocation::TotalGpus() const {
  int32_t gpus = 0;
  for (const HostGrant& grant : hosts) gpus += __builtin_popcountll(grant.gpus);
  return gpus;
}

}  // namespace sluice::core
