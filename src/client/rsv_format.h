// Text output of `sluice rsv` from the reservation API's JSON (docs/api.md, R-RSV-1):
//
//   list     one row per reservation: NAME STATE WHERE WINDOW USERS FLAGS, WHERE the hosts
//            compressed (h[1-8]) or `N slots [REQ]`, WINDOW the current or next window in
//            local time (`2026-12-06 15:00 - 17:00`), USERS the users and groups (a group with
//            LSF's trailing slash: `physics/`), FLAGS maint, ignore_jobs, recur, overrun=10m
//   show     every member on a labelled line, then its next windows
//   preview  the running jobs the reservation would overlap and the pending jobs it would
//            delay, each with its estimated start without and with it
//   hosts    a host's reservations (GET /v1/hosts' `reservations`) in one cell
// Missing or null members print as `-`; text from the server is made printable.
// Thread-safety: pure functions; times in the process's local time zone.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace sluice::client {

// `list`: GET /v1/reservations' body (or its array). `now` picks the current or next window.
std::string FormatReservations(const nlohmann::json& list, int64_t now);
// `show`: one reservation object; at most `max_windows` of its windows not ended by `now`.
std::string FormatReservationLong(const nlohmann::json& rsv, int64_t now, size_t max_windows = 10);
// `preview`: POST /v1/reservations/preview's body.
std::string FormatRsvPreview(const nlohmann::json& preview);
// A host's `reservations` as `course 2026-12-06 15:00 - 17:00` (several: separated by "; "),
// "" when it has none.
std::string HostReservationsText(const nlohmann::json& host);
// `2026-12-06 15:00 - 17:00` (the end's date only when it differs), `... - open` without an end.
std::string WindowText(int64_t begin, const nlohmann::json& end);

}  // namespace sluice::client
