// Values as Slurm writes them (R-COMPAT-1), read and written: times and time limits,
// dependencies, timestamps, elapsed times and compressed host lists.
// Thread-safety: pure functions (timestamps are in the process's local time zone).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/host_list.h"
#include "base/status.h"

namespace sluice::client::compat {

// Slurm's --time forms -> seconds: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. Errors: kInvalidArgument
// naming the forms (also for "infinite": see ParseSlurmTimeLimit).
Result<int64_t> ParseSlurmTime(std::string_view text);
// A time limit: as ParseSlurmTime, or UNLIMITED / INFINITE (any case), which is 0 (none).
Result<int64_t> ParseSlurmTimeLimit(std::string_view text);
// Slurm's --dependency -> Sluice's expression: `afterok:1:2,afterany:3` is
// `done(1) && done(2) && ended(3)`, `?` separates alternatives (`||`), `12_3` is element 3 of
// array 12. Errors: kInvalidArgument naming what was expected.
Result<std::string> TranslateSlurmDependency(std::string_view text);
// --begin: now+N[seconds|minutes|hours|days|weeks] becomes "+SECONDS"; other forms stay as
// they are when ParseBeginTime (client/submit_request.h) reads them. Errors: kInvalidArgument.
Result<std::string> TranslateSlurmBegin(std::string_view value, int64_t now);

// 2026-12-05T03:06:55, or "Unknown" for 0.
std::string SlurmDateTime(int64_t unix_seconds);
// squeue's %M and %l: M:SS, H:MM:SS or D-HH:MM:SS.
std::string SlurmElapsed(int64_t seconds);
// scontrol's RunTime and TimeLimit: HH:MM:SS or D-HH:MM:SS.
std::string SlurmClock(int64_t seconds);
// "n1,n2,n3,m07" -> "m07,n[1-3]" (base/host_list.h: the core's reasons write hosts so too).
using ::sluice::CompressHostList;

}  // namespace sluice::client::compat
