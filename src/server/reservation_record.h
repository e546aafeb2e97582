// An advance reservation as the controller keeps it (issue 42, R-RSV-1): what an administrator
// or a user asked for through POST/PATCH /v1/reservations, parsed and checked field by field,
// its stored JSON, and its windows in wall time (Unix seconds).
//
// Representation: a ReservationRecord is the request as made (hosts or slots with a request,
// begin, the end or the duration, users, groups, MAINT, IGNORE_JOBS, the overrun, a cron
// recurrence) plus who made it and when; `hosts` always holds the hosts it keeps (for a slots
// reservation, the ones the controller picked: Sluice keeps whole hosts). Without `recur` the
// one window is [begin, begin + duration) and `end` is its end; with it, each occurrence of the
// cron lasts `duration`, none begins before `begin`, and `end` (if set) ends the recurrence.
// Invariants after ParseReservation: duration >= 1; end > begin when set; hosts distinct.
// Thread-safety: value types and pure functions (ExpandWindows reads the time zone database).
// Implements the data side of R-RSV-1; the rules are server/advance_reservations.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace sluice::server {

struct ReservationRecurrence {
  std::string cron;  // 5 crontab fields
  std::string tz;    // an IANA zone; "" is UTC
  friend bool operator==(const ReservationRecurrence&, const ReservationRecurrence&) = default;
};

struct ReservationRecord {
  std::string name;
  std::vector<std::string> hosts;
  std::optional<int64_t> slots;        // asked for slots (then `hosts` were picked)
  std::optional<std::string> request;  // with slots: the hosts' request, e.g. select[mem>4G]
  Instant begin = 0;
  std::optional<Instant> end;
  Duration duration = 0;  // each window's length
  std::vector<std::string> users;
  std::vector<std::string> groups;
  bool maint = false;
  bool ignore_jobs = false;
  Duration overrun = 0;
  std::optional<ReservationRecurrence> recur;
  std::string creator;
  Instant created = 0;
  friend bool operator==(const ReservationRecord&, const ReservationRecord&) = default;
};

// A window in wall time (Unix seconds), [begin, end).
struct WallSpan {
  Instant begin = 0;
  Instant end = 0;
  friend bool operator==(const WallSpan&, const WallSpan&) = default;
};

// How far ahead a recurring reservation's windows are expanded, and how many at most: the
// core plans with these; the controller expands again as they pass (AdvanceReservations).
inline constexpr Duration kRecurrenceHorizon = 8 * 86400;
inline constexpr size_t kMaxWindows = 10;

// What ParseReservation reads the body for.
enum class ReservationBodyKind { kCreate, kModify, kPreview };

// Reads a POST (kCreate, kPreview: `base` null) or PATCH (kModify: the fields given replace
// `base`'s) body into a record; creator and created are left to the caller. Errors:
// kInvalidArgument "reservation.FIELD: expected WHAT, got VALUE" (or what is wrong with it):
// an unknown field, a missing name (kCreate) or a name given to kModify, neither or both of
// hosts and slots, `request` without slots, a missing begin, neither or both of end and
// duration (without recur), no duration with recur, an end not after begin, a recurrence the
// cron parser refuses.
Result<ReservationRecord> ParseReservation(const nlohmann::json& body, ReservationBodyKind kind,
                                           const ReservationRecord* base);

// The stored JSON text and back (the store's `reservations` rows). Errors (FromStoredJson):
// kInvalidArgument naming the row when the text is not a reservation.
std::string ToStoredJson(const ReservationRecord& record);
Result<ReservationRecord> FromStoredJson(const std::string& name, const std::string& text);

// The windows that end after `now`, at most kMaxWindows, in order: the one window of a
// reservation without recurrence, else the occurrences beginning at or after `begin` (and
// before `end`) within kRecurrenceHorizon of max(now, begin). Empty once none is left.
// Errors: the recurrence's (a zone or cron the expansion refuses).
Result<std::vector<WallSpan>> ExpandWindows(const ReservationRecord& record, Instant now);

// The reservation object of the REST API (docs/reservations.md) with `windows` (those of
// `windows` that end after `now`) and `state` ("waiting", "active" or "ended") as of `now`.
nlohmann::json ReservationJson(const ReservationRecord& record,
                               const std::vector<WallSpan>& windows, Instant now);

}  // namespace sluice::server
