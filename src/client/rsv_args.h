// The values of `sluice rsv` (and brsvadd's, scontrol's) options: times, durations and host
// lists, read into the Unix seconds and names of the reservation API (docs/api.md,
// docs/reservations.md "Commands"; R-RSV-1).
//
// Times (ParseRsvTime), local time unless a zone is written:
//   now, now+DURATION, +DURATION          from `now` (DURATION as below: now+30m, +2h)
//   YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM|-HH:MM] ISO 8601; with Z or an offset, that instant
//   YYYY-MM-DD                             midnight
//   [[[YEAR:]MONTH:]DAY:]HOUR:MINUTE        LSF's form (brsvadd -b/-e: three fields are
//                                          DAY:HOUR:MINUTE); HOUR:MINUTE alone is the next
//                                          such time (today, or tomorrow if past)
//   SECONDS                                epoch seconds (9 digits or more)
// Durations (ParseRsvDuration): 90s, 90m, 2h, 1d or sums of them (1h30m); H:M:S or D-H:M:S
// (1:30:00, 1-00:00:00); H:M (1:30); MINUTES alone (90), as `submit -W` and Slurm's Duration.
// Host lists (ExpandHostList): names and ranges separated by commas or spaces, a range as the
// rest of the CLI writes it: h[1-8], h[01-16], h[1-3,7], rack1-h[1-4].
// Every error is kInvalidArgument naming the option as the caller passes it and what was
// expected: `-b 25:00: expected a time: now, now+30m, ...`.
// Thread-safety: pure functions (local times use the process's time zone).
// Implements the option values of R-RSV-1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::client {

// A host list may not name more than this many hosts (h[1-99999999] is a typo).
inline constexpr size_t kMaxRsvHosts = 100'000;

Result<int64_t> ParseRsvTime(std::string_view text, std::string_view option, int64_t now);
// A positive number of seconds.
Result<int64_t> ParseRsvDuration(std::string_view text, std::string_view option);
// The names in order, duplicates dropped; at least one.
Result<std::vector<std::string>> ExpandHostList(std::string_view text, std::string_view option);
// A comma- or space-separated list of names (users, groups); at least one.
Result<std::vector<std::string>> SplitNameList(std::string_view text, std::string_view option);

// "2h", "1d 2h", "90m", "45s": a window's length for the tables.
std::string DurationText(int64_t seconds);

}  // namespace sluice::client
