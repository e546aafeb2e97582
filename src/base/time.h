// Instant and Duration: simulated or wall time in whole seconds since the Unix epoch.
//
// The core never reads a clock; drivers pass `now` as an Instant (R-ARCH-1). Seconds are the
// unit of every trace format and of run limits, so no finer grain is carried. kInfinite marks
// "never" (e.g. the end of a job without a run limit).
#pragma once

#include <cstdint>
#include <limits>

namespace sluice {

using Instant = int64_t;   // seconds since 1970-01-01T00:00:00Z (or trace time 0)
using Duration = int64_t;  // seconds

inline constexpr Instant kInfinite = std::numeric_limits<int64_t>::max();

// a + d, saturating at kInfinite so "never" stays "never".
constexpr Instant AddDuration(Instant a, Duration d) {
  if (a == kInfinite || d == kInfinite) return kInfinite;
  if (d > 0 && a > kInfinite - d) return kInfinite;
  return a + d;
}

}  // namespace sluice
