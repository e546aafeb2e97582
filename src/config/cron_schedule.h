// A crontab(5) schedule: which minutes of which days a recurring reservation begins
// (R-RSV-1, `--recur '0 8 * * mon-fri'`).
//
// Five fields — minute (0-59), hour (0-23), day of month (1-31), month (1-12 or jan-dec),
// day of week (0-7 or sun-sat, 0 and 7 both Sunday) — each `*`, a number or name, a range
// `a-b`, a step `*/n` or `a-b/n` or `a/n` (a to the field's end), or a comma list of those.
// The macros @yearly (@annually), @monthly, @weekly, @daily (@midnight) and @hourly stand for
// their usual five fields. As in Vixie cron and cronie, when both day fields are restricted
// (neither starts with `*`) a day matches if EITHER matches; otherwise both must.
//
// The schedule is calendar arithmetic only; which instant a civil time is belongs to the
// time zone (config/reservation_recurrence.h). Thread-safety: immutable after Parse.
#pragma once

#include <bitset>
#include <string_view>

#include "base/status.h"

namespace sluice::config {

class CronSchedule {
 public:
  // Errors (kInvalidArgument) name the field and what was expected:
  //   "cron field 2 (hour): 25 is out of 0-23",
  //   "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 3",
  //   "cron: never matches (day 31 does not occur in the months given)".
  static Result<CronSchedule> Parse(std::string_view text);

  bool MatchesMonth(unsigned month) const { return months_[month - 1]; }  // 1-12
  // `weekday` 0 (Sunday) to 6.
  bool MatchesDay(unsigned day_of_month, unsigned weekday) const;
  bool MatchesHour(unsigned hour) const { return hours_[hour]; }
  bool MatchesMinute(unsigned minute) const { return minutes_[minute]; }

 private:
  CronSchedule() = default;

  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<31> days_;  // bit d-1 for day d
  std::bitset<12> months_;
  std::bitset<7> weekdays_;
  bool days_restricted_ = false;
  bool weekdays_restricted_ = false;
};

}  // namespace sluice::config
