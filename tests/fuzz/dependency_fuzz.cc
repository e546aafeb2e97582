// libFuzzer target for dependency expressions (R-Q-3): parsing any input must not crash,
// hang or recurse without bound, and a parsed expression must survive the round trip
// Parse -> ToString -> Parse with the same text, jobs and verdicts. A broken round trip
// aborts, so the fuzzer reports the input.
//
// Seeds: tests/fuzz/seeds/dependency (one expression per file).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/dependency.h"

namespace sluice::core {
namespace {

void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "dependency_fuzz: %s\n", what);
  std::abort();
}

// A state per job id derived from the id, so every state (and unknown jobs) occurs.
std::optional<DependTarget> Lookup(JobId id) {
  static constexpr JobState kStates[] = {JobState::kPending, JobState::kHeld, JobState::kRunning,
                                         JobState::kDone,    JobState::kExit, JobState::kCancelled};
  if (id % 7 == 6) return std::nullopt;
  return DependTarget{.state = kStates[id % 6], .started = id % 2 == 0};
}

}  // namespace
}  // namespace sluice::core

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice::core;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sluice::Result<Dependency> parsed = Dependency::Parse(text);
  if (!parsed) {
    Require(!parsed.error().message().empty(), "an error without a message");
    return 0;
  }
  const std::string canonical = parsed->ToString();
  // Canonical text spells bare ids out (`7` -> `done(7)`) and spaces operators, so it may
  // outgrow the input limit; the round trip applies to what fits.
  if (canonical.size() > kMaxDependencyText) return 0;
  sluice::Result<Dependency> again = Dependency::Parse(canonical);
  Require(again.has_value(), "the canonical text does not parse");
  Require(again->ToString() == canonical, "the canonical text is not a fixed point");
  Require(again->jobs() == parsed->jobs(), "the round trip changed the jobs");
  const DependEvaluation a = parsed->Evaluate(Lookup);
  const DependEvaluation b = again->Evaluate(Lookup);
  Require(a.verdict == b.verdict && a.condition == b.condition,
          "the round trip changed the verdict");
  Require((a.verdict == DependVerdict::kSatisfied) == a.condition.empty(),
          "a condition is reported exactly when the dependency is not satisfied");
  return 0;
}
