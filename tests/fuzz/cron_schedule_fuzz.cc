// libFuzzer target for crontab schedules of recurring reservations (config/cron_schedule.h,
// config/reservation_recurrence.h). Beyond "no crash, no hang, no UB" it checks the
// contract: a refused schedule is kInvalidArgument naming cron; an accepted one expands,
// in UTC and in a zone with daylight saving, into sorted, non-empty, disjoint windows within
// the range asked. A broken promise aborts through SLUICE_CHECK.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/status.h"
#include "config/cron_schedule.h"
#include "config/reservation_recurrence.h"

namespace {

using sluice::Instant;
using sluice::config::ExpandRecurrence;
using sluice::config::Recurrence;
using sluice::config::WallWindow;

void CheckWindows(const std::vector<WallWindow>& windows, Instant from, Instant until) {
  SLUICE_CHECK(windows.size() <= 64);
  for (size_t i = 0; i < windows.size(); ++i) {
    SLUICE_CHECK(windows[i].begin < windows[i].end);
    SLUICE_CHECK(windows[i].end > from && windows[i].begin < until);
    if (i > 0) SLUICE_CHECK(windows[i].begin >= windows[i - 1].end);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const sluice::Result<sluice::config::CronSchedule> schedule =
      sluice::config::CronSchedule::Parse(text);
  if (!schedule) {
    SLUICE_CHECK(schedule.error().code() == sluice::StatusCode::kInvalidArgument);
    SLUICE_CHECK(schedule.error().message().starts_with("cron"));
    return 0;
  }
  constexpr Instant kFrom = 1806000000;  // March 2027, across Berlin's spring change
  constexpr Instant kUntil = kFrom + 4 * 86400;
  for (const char* zone : {"UTC", "Europe/Berlin"}) {
    const Recurrence recurrence{text, zone, 1 + static_cast<sluice::Duration>(size % 7200)};
    const auto windows = ExpandRecurrence(recurrence, kFrom, kUntil, 64);
    SLUICE_CHECK(windows.has_value());
    CheckWindows(*windows, kFrom, kUntil);
  }
  return 0;
}
