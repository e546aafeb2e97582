// LSF's advance reservation commands (R-COMPAT-1, R-RSV-1) read into `sluice rsv`'s options
// (client/rsv_request.h), and brsvs's listing.
//
// brsvadd [-N NAME] [-s] [-u "USER ... GROUP/ ..."] [-g GROUP] (-m "HOST ..." | -n SLOTS
//         [-R REQ]) (-b BEGIN -e END | -t WINDOW) [-d DESCRIPTION] [-f] [-unit slot]
//   -m      the hosts (names or ranges); with -m, -n (LSF: how many of their slots) is not
//           needed: Sluice reserves whole hosts, and says so in a warning
//   -n -R   a number of slots on hosts matching the request
//   -u      users, and groups written with LSF's trailing slash (`physics/`); -g a group
//   -s      a system reservation: MAINT, for no user
//   -b -e   LSF's [[[YEAR:]MONTH:]DAY:]HOUR:MINUTE (or Sluice's forms: client/rsv_args.h)
//   -t      a recurring window, [WEEKDAY:]HOUR[:MINUTE]-[WEEKDAY:]HOUR[:MINUTE] (WEEKDAY 0-6,
//           0 Sunday): a cron line from now on in this machine's zone, each window as long as
//           from its start to its end
//   -d -f   accepted without effect (a warning names them)
// Refused (kFailedPrecondition, "not supported by Sluice"): -o (open reservations), -p, -q,
// -E, -Ep, -Et, -Ept, -nosusp, -unit host. Unknown options: "illegal option -- X".
// Without -N the caller names it (NextRsvName).
// Thread-safety: pure functions.
// Implements R-COMPAT-1 for brsvadd and brsvs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/rsv_request.h"

namespace sluice::client::compat {

struct BrsvaddRequest {
  RsvFlags flags;  // flags.name is empty without -N
  std::vector<std::string> warnings;
};

// `args` after `brsvadd`; `now` and `zone` (this machine's, for -t) read the times.
Result<BrsvaddRequest> ParseBrsvaddArgs(std::span<const std::string> args, int64_t now,
                                        const std::string& zone);

// LSF's -t window -> a cron line and each window's length in seconds. Errors: kInvalidArgument
// "-t WINDOW: expected [WEEKDAY:]HOUR[:MINUTE]-[WEEKDAY:]HOUR[:MINUTE]".
Result<std::pair<std::string, int64_t>> LsfWindowToCron(const std::string& window);

// The first of PREFIX_0, PREFIX_1, ... that no reservation of `list` (GET /v1/reservations'
// body) has; PREFIX is the first user, or "system".
std::string NextRsvName(const nlohmann::json& list, const std::string& prefix);

// brsvs: RSVID TYPE USER NCPUS RSV_HOSTS TIME_WINDOW, one line per reservation; TYPE `sys`
// for a maintenance reservation, else `user`; TIME_WINDOW the current or next window as LSF
// writes it (`12/6/15/0-12/6/17/0`), or the cron line of a recurring one.
std::string FormatBrsvs(const nlohmann::json& list, int64_t now);

}  // namespace sluice::client::compat
