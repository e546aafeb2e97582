// Recurring reservations (R-RSV-1): a cron schedule in a named time zone, each occurrence
// a window of a fixed length — "every weekday 08:00-12:00 Europe/Berlin" for a course,
// "the first Sunday of the month 02:00 for 6 h" for maintenance.
//
// The schedule is the five fields of crontab(5) (minute hour day-of-month month
// day-of-week, with `*`, lists, ranges, steps, month and day names, and the rule that a
// day matches either restricted day field when both are restricted). It is read in civil
// time of the zone (the IANA database in /usr/share/zoneinfo, through Howard Hinnant's
// date library): across a daylight-saving change an occurrence keeps its wall-clock time,
// so its UTC instant moves by the change; a time that does not exist (the spring gap) starts
// at the instant the clocks jump (02:30 → 03:00, as cronie runs what the gap skipped at
// once), and a time that occurs twice (autumn) starts once, at its first instant. A window
// lasts `duration` seconds of real time, whatever the clocks do inside it.
//
// The drivers expand a recurrence into windows in wall time (Unix seconds); the core
// receives the windows only (see core/model/advance_reservation.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace sluice::config {

// How far ExpandRecurrence looks: long enough for the rarest schedule (29 February, eight
// years apart across 2100), short enough to bound the scan.
inline constexpr Duration kRecurrenceHorizon = 12 * 366 * 86400;
// The longest occurrence.
inline constexpr Duration kMaxOccurrence = 366 * 86400;

struct Recurrence {
  std::string cron;       // "0 8 * * mon-fri"
  std::string time_zone;  // "Europe/Berlin"; empty: UTC
  Duration duration = 0;  // seconds, > 0

  friend bool operator==(const Recurrence&, const Recurrence&) = default;
};

// A window in Unix seconds: [begin, end).
struct WallWindow {
  Instant begin = 0;
  Instant end = 0;

  friend bool operator==(const WallWindow&, const WallWindow&) = default;
};

// Checks the schedule, the zone and the duration; the message names the field and what
// was expected ("cron field 2 (hour): 25 is out of 0-23").
Status CheckRecurrence(const Recurrence& recurrence);

// The occurrences, in order, whose windows end after `from` and begin before `until`, at
// most `max_count` of them, looking at most kRecurrenceHorizon past `from`. Occurrences
// closer together than `duration` would overlap: the later one is skipped (the core
// requires disjoint windows). Errors: those of CheckRecurrence, and `from` outside
// 1970-9999.
Result<std::vector<WallWindow>> ExpandRecurrence(const Recurrence& recurrence, Instant from,
                                                 Instant until, size_t max_count);

}  // namespace sluice::config
