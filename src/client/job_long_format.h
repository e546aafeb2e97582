// `sluice jobs -l` (R-UX-4; bjobs -l, scontrol show job): every member of a job object
// (docs/api.md "job object") on its own labelled line, in a fixed order a reader scans:
// identity (name, user, queue, project), state and since when, command or script, working
// directory and files, the request (tasks, resreq, run limit, exclusive, priority, dependency,
// begin), hosts, times, exit code, cause and message, estimate and usage (estimated start,
// cpu time, peak memory), then its steps (R-LAUNCH-2: one aligned line per `sluice launch`,
// `ID.N` with host, state, exit, start, end, cpu, peak memory and command), then the pending
// reasons one per line with their per-host detail and what would let the job start, then the
// admission record. A member this file does not know (a newer server) is still printed, under
// its JSON name, so nothing is hidden.
// Missing or null members print as `-`; times in the process's local time zone.
// Pure functions. docs/cli.md shows an example.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sluice::client {

// One job object.
std::string FormatJobLong(const nlohmann::json& job);
// Each job of an array, separated by a blank line.
std::string FormatJobsLong(const nlohmann::json& jobs);

}  // namespace sluice::client
