// Advance reservations in a Sluice JSONL workload (R-RSV-1, issue 42): a line
//   {"reservation": {"name": "course", "hosts": ["h1", "h2"], "begin": 3600, "end": 7200,
//                    "users": ["alice"], "groups": [], "maint": false, "overrun": 0}}
// defines one; `windows: [[b, e], ...]` (sorted, disjoint) replaces begin/end for a
// recurring one, already expanded. Times are simulated seconds, as for jobs. The simulator
// sets every reservation of the file at time 0; what the core refuses (an unknown host, an
// overlap between reservations that are not MAINT) is an error naming the reservation.
// A job line's `"reservation": "course"` puts the job in it (`-U course`).
// Thread-safety: a free function, no shared state.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/model/advance_reservation.h"

namespace sluice::sim {

// Reads the object of a reservation line. Errors: kInvalidArgument "<field>: <expected>"
// (the caller adds the file and line): unknown keys, wrong types, no name or hosts, neither
// begin/end nor windows (or both), an end not after its begin, a negative overrun.
Result<core::AdvanceReservationSpec> ParseReservationLine(const nlohmann::json& object);

}  // namespace sluice::sim
