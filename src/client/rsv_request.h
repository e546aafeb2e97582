// `sluice rsv add|modify|preview` options -> the bodies of POST /v1/reservations, PATCH
// /v1/reservations/NAME and POST /v1/reservations/preview (docs/api.md, R-RSV-1):
//
//   -m HOSTS            "hosts": [...]            (names and ranges: client/rsv_args.h)
//   -n SLOTS [-R REQ]   "slots": N, "request"
//   -b BEGIN            "begin": T                (times: client/rsv_args.h)
//   -e END | -d DUR     "end": T | "duration": S  (with --recur: -d is each window's length,
//                                                  -e ends the recurrence)
//   -u USERS -g GROUPS  "users": [...], "groups": [...]
//   --maint --ignore-jobs       "maint": true, "ignore_jobs": true (--no-... : false)
//   --overrun DUR       "overrun": S
//   --recur CRON --tz Z "recur": {"cron": CRON, "tz": Z}; `--recur none` (modify): null
//
// Rules checked here, before anything is sent: add and preview need a place (-m or -n, not
// both), -b, and -e or -d (not both; with --recur, -d); -R goes with -n; --tz with --recur;
// a cron line has 5 fields; modify needs at least one option. The server checks the rest
// (known hosts, overlaps, the zone's name, who may do it).
// Errors are kInvalidArgument naming the option and what was expected.
// Thread-safety: pure functions (the clock is passed in).
// Implements the request side of R-RSV-1.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"

namespace sluice::client {

// The options as written; unset ones are not sent.
struct RsvFlags {
  std::string name;  // add: required; preview: optional; modify: the path's, never in the body
  std::optional<std::string> hosts, slots, request;
  std::optional<std::string> begin, end, duration;
  std::optional<std::string> users, groups;
  std::optional<bool> maint, ignore_jobs;
  std::optional<std::string> overrun;
  std::optional<std::string> recur, tz;
};

enum class RsvBody { kAdd, kModify, kPreview };

// `now` (Unix seconds) reads relative and local times.
Result<nlohmann::json> BuildRsvBody(const RsvFlags& flags, RsvBody kind, int64_t now);

// A reservation name as the API takes it: letters, digits, '-', '_' and '.', at most 64,
// starting with a letter or digit. `what` names it in the message ("NAME", "ReservationName").
Status CheckRsvName(const std::string& name, const std::string& what);

}  // namespace sluice::client
