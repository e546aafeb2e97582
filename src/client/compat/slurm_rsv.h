// Slurm's reservation forms of scontrol (R-COMPAT-1, R-RSV-1): `create reservation` and
// `update` read into `sluice rsv`'s options (client/rsv_request.h), and `show reservation`'s
// text.
//
// KEY=VALUE words, keys in any case:
//   ReservationName=NAME (also Reservation=)   StartTime=now|now+N[units]|YYYY-MM-DDTHH:MM[:SS]
//   EndTime=(as StartTime)   Duration=MINUTES|[D-]H:M:S (Slurm's forms)
//   Nodes=h[1-8],g1   CoreCnt=N (slots on any hosts)   Users=a,b   Groups=g
//   Flags=MAINT,IGNORE_JOBS and one of DAILY, WEEKDAY, WEEKEND, WEEKLY, HOURLY (a recurrence:
//     a cron line at StartTime's minute, hour and weekday, in this machine's zone); in an
//     update, -MAINT and -IGNORE_JOBS turn a flag off
// Refused (kFailedPrecondition, "not supported by Sluice"): Nodes=ALL, NodeCnt, PartitionName,
// Accounts, Licenses, TRES, Features, BurstBuffer, Watts and the other flags (FLEX, OVERLAP,
// ...), a Users=-name exclusion. Anything else: kInvalidArgument naming the word.
// Thread-safety: pure functions (times in the process's local time zone).
// Implements R-COMPAT-1 for scontrol's reservations.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "base/status.h"
#include "client/rsv_request.h"

namespace sluice::client::compat {

// `words` after `create reservation` (or `update`); `zone` is this machine's time zone name
// (for a recurrence). In an update nothing is required; `flags.name` is the reservation's.
Result<RsvFlags> ParseScontrolReservation(std::span<const std::string> words, int64_t now,
                                          const std::string& zone);

// `scontrol show reservation`: one reservation object as Slurm prints it (its current or next
// window), followed by a blank line.
std::string ScontrolShowReservation(const nlohmann::json& rsv, int64_t now);

}  // namespace sluice::client::compat
