// DispatchWindows: when a queue may dispatch (SPEC §2 `windows`, R-Q-1), in UTC wall time.
//
// Syntax of one window:
//   "HH:MM-HH:MM"          every day; an end before the start wraps past midnight
//                          ("19:00-07:00" is open from 19:00 to 07:00 the next morning)
//   "Ddd HH:MM-Ddd HH:MM"  weekly, Ddd one of Mon Tue Wed Thu Fri Sat Sun; wraps past Sunday
//                          ("Fri 18:00-Mon 08:00" is the weekend)
// HH is 00-23 and MM 00-59; a window whose start equals its end is refused (empty). A window
// is open from its start (inclusive) to its end (exclusive). A queue with no windows is
// always open; with several, it is open when any is.
//
// Representation: the union of the windows as sorted, disjoint, non-adjacent intervals of
// seconds since Monday 00:00 UTC, [0, 604800). Wall time w (Unix seconds; 1970-01-01 was a
// Thursday) is second (w + 3 days) mod 1 week of its week. Immutable after Parse.
// Thread-safety: a value type. Implements the windows of R-Q-1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace sluice::core {

inline constexpr int64_t kSecondsPerWeek = 7 * 86400;

class DispatchWindows {
 public:
  // No windows: always open.
  DispatchWindows() = default;

  // Parses every window. Errors: kInvalidArgument "'<text>' is not a window ..." naming the
  // window (callers add its location), or "'<text>' is empty (start equals end)".
  static Result<DispatchWindows> Parse(const std::vector<std::string>& windows);
  // Checks one window's syntax (the YAML loader's per-item check).
  static Status Check(std::string_view window);

  // True when the queue may dispatch at wall time `wall`.
  bool IsOpen(Instant wall) const;
  // The first time after `wall` at which IsOpen changes, or nullopt when it never does
  // (no windows, or windows covering the whole week).
  std::optional<Instant> NextChange(Instant wall) const;
  // When closed at `wall`: when it opens next. When open: `wall`.
  Instant NextOpening(Instant wall) const;

  bool always_open() const { return intervals_.empty() || full_week_; }
  const std::vector<std::pair<int64_t, int64_t>>& intervals() const { return intervals_; }

 private:
  std::vector<std::pair<int64_t, int64_t>> intervals_;  // [start, end) within one week
  bool full_week_ = false;
};

}  // namespace sluice::core
