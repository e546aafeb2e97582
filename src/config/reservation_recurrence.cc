#include "config/reservation_recurrence.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include <date/tz.h>
#include <fmt/format.h>

#include "config/cron_schedule.h"

namespace sluice::config {
namespace {

using std::chrono::days;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// 9999-12-31T23:59:59Z: date's civil arithmetic is exact well past it.
constexpr Instant kLastInstant = 253402300799;

Result<const date::time_zone*> FindZone(const std::string& name) {
  try {
    return date::locate_zone(name.empty() ? "UTC" : name);
  } catch (const std::exception&) {
    return InvalidArgument(fmt::format(
        "time zone '{}' is not in the time-zone database (/usr/share/zoneinfo); expected a "
        "name like Europe/Berlin, America/New_York or UTC",
        name));
  }
}

Status CheckDuration(Duration duration) {
  if (duration <= 0 || duration > kMaxOccurrence) {
    return InvalidArgument(fmt::format(
        "recurrence duration: expected 1 second to {} days, got {} seconds",
        kMaxOccurrence / 86400, duration));
  }
  return Status::Ok();
}

date::sys_seconds Sys(Instant t) { return date::sys_seconds{seconds{t}}; }

// The begins of a schedule's occurrences in time order, from a local day on; nullopt after
// `last_day`. Civil order is time order: a time in the spring gap maps to the jump itself,
// a repeated autumn time to its first instant; civil times that map to one instant (the gap's
// and the jump's) are one occurrence.
class OccurrenceScan {
 public:
  OccurrenceScan(const CronSchedule& schedule, const date::time_zone& zone,
                 date::local_days first_day, date::local_days last_day)
      : schedule_(schedule), zone_(zone), day_(first_day), last_day_(last_day) {}

  std::optional<Instant> Next() {
    std::optional<Instant> next = NextCivil();
    while (next && last_ && *next == *last_) next = NextCivil();
    if (next) last_ = next;
    return next;
  }

 private:
  std::optional<Instant> NextCivil() {
    for (; day_ <= last_day_; day_ += days{1}, minute_ = 0) {
      if (!DayMatches()) continue;
      for (; minute_ < 24 * 60; ++minute_) {
        const unsigned h = minute_ / 60;
        const unsigned m = minute_ % 60;
        if (!schedule_.MatchesHour(h) || !schedule_.MatchesMinute(m)) continue;
        const date::local_seconds civil = day_ + hours{h} + minutes{m};
        ++minute_;
        return zone_.to_sys(civil, date::choose::earliest).time_since_epoch().count();
      }
    }
    return std::nullopt;
  }

  bool DayMatches() const {
    const date::year_month_day date{day_};
    return schedule_.MatchesMonth(static_cast<unsigned>(date.month())) &&
           schedule_.MatchesDay(static_cast<unsigned>(date.day()),
                                date::weekday{day_}.c_encoding());
  }

  const CronSchedule& schedule_;
  const date::time_zone& zone_;
  date::local_days day_;
  date::local_days last_day_;
  unsigned minute_ = 0;
  std::optional<Instant> last_;
};

date::local_days LocalDay(const date::time_zone& zone, Instant t) {
  return date::floor<days>(zone.to_local(Sys(t)));
}

// Whether two occurrences in the year from kCheckYear come closer than `duration` (a
// daylight-saving change shortens a day by an hour): the first such pair.
std::optional<std::pair<Instant, Instant>> FirstOverlap(const CronSchedule& schedule,
                                                       const date::time_zone& zone,
                                                       Duration duration) {
  constexpr Instant kCheckYear = 1798761600;  // 2027-01-01T00:00Z
  OccurrenceScan scan(schedule, zone, LocalDay(zone, kCheckYear),
                      LocalDay(zone, kCheckYear + 366 * 86400));
  std::optional<Instant> previous = scan.Next();
  for (std::optional<Instant> next = scan.Next(); previous && next; next = scan.Next()) {
    if (*next - *previous < duration) return std::pair{*previous, *next};
    previous = next;
  }
  return std::nullopt;
}

std::string Utc(Instant t) { return date::format("%Y-%m-%d %H:%M UTC", Sys(t)); }

}  // namespace

Status CheckRecurrence(const Recurrence& recurrence) {
  const Result<CronSchedule> schedule = CronSchedule::Parse(recurrence.cron);
  if (!schedule) return schedule.error();
  const Result<const date::time_zone*> zone = FindZone(recurrence.time_zone);
  if (!zone) return zone.error();
  const Status duration = CheckDuration(recurrence.duration);
  if (!duration.ok()) return duration;
  if (const auto overlap = FirstOverlap(*schedule, **zone, recurrence.duration)) {
    return InvalidArgument(fmt::format(
        "recurrence: occurrences at {} and {} are {} s apart, less than the duration {} s "
        "(windows may not overlap; a daylight-saving change shortens a day by an hour)",
        Utc(overlap->first), Utc(overlap->second), overlap->second - overlap->first,
        recurrence.duration));
  }
  return Status::Ok();
}

Result<std::vector<WallWindow>> ExpandRecurrence(const Recurrence& recurrence, Instant from,
                                                 Instant until, size_t max_count) {
  const Result<CronSchedule> schedule = CronSchedule::Parse(recurrence.cron);
  if (!schedule) return schedule.error();
  const Result<const date::time_zone*> found = FindZone(recurrence.time_zone);
  if (!found) return found.error();
  const Status duration_ok = CheckDuration(recurrence.duration);
  if (!duration_ok.ok()) return duration_ok;
  if (from < 0 || from > kLastInstant) {
    return InvalidArgument(fmt::format("recurrence: {} is outside 1970-9999", from));
  }
  const date::time_zone& zone = **found;
  const Duration length = recurrence.duration;
  const Instant scan_end = std::min(until, from + kRecurrenceHorizon);
  // From the local day of the earliest begin whose window could still be open at `from`
  // (a day early, for the zone's offset) to the local day after `scan_end`.
  OccurrenceScan scan(*schedule, zone, LocalDay(zone, std::max<Instant>(0, from - length)) - days{1},
                      LocalDay(zone, scan_end) + days{1});
  std::vector<WallWindow> windows;
  std::optional<Instant> begin = scan.Next();
  while (begin && *begin < scan_end && windows.size() < max_count) {
    const std::optional<Instant> next = scan.Next();
    // A window ends at the next occurrence at the latest: only on days CheckRecurrence's
    // year did not show can they come closer than the duration. This depends on the next
    // occurrence alone, so the windows are the same whatever `from` is.
    const Instant end = next ? std::min(*begin + length, *next) : *begin + length;
    if (end > from && end > *begin) windows.push_back({*begin, end});
    begin = next;
  }
  return windows;
}

}  // namespace sluice::config
