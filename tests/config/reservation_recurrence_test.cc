// Recurring reservations (R-RSV-1): a cron schedule in a named time zone expands into windows
// that keep their wall-clock time across daylight-saving changes. Expected instants were
// computed independently (Python's zoneinfo over the same IANA data).
#include "config/reservation_recurrence.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::config {
namespace {

constexpr Instant kHour = 3600;
constexpr Instant kDay = 86400;

std::vector<WallWindow> Expand(const Recurrence& r, Instant from, Instant until, size_t max) {
  Result<std::vector<WallWindow>> windows = ExpandRecurrence(r, from, until, max);
  EXPECT_TRUE(windows.has_value()) << windows.error().message();
  return windows ? *windows : std::vector<WallWindow>{};
}

std::vector<Instant> Begins(const std::vector<WallWindow>& windows) {
  std::vector<Instant> out;
  for (const WallWindow& w : windows) out.push_back(w.begin);
  return out;
}

TEST(ReservationRecurrenceTest, DailyInUtc) {
  const Instant jan1 = 1798761600;  // 2027-01-01T00:00Z, a Friday
  const std::vector<WallWindow> w = Expand({"0 8 * * *", "", 4 * kHour}, jan1, jan1 + 3 * kDay, 10);
  ASSERT_EQ(w.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(w[i].begin, jan1 + static_cast<Instant>(i) * kDay + 8 * kHour);
    EXPECT_EQ(w[i].end, w[i].begin + 4 * kHour);
  }
}

TEST(ReservationRecurrenceTest, KeepsWallClockTimeAcrossTheSpringChange) {
  // Europe/Berlin moves to summer time on 2027-03-28: 08:00 is 07:00Z before, 06:00Z after.
  const Recurrence course{"0 8 * * *", "Europe/Berlin", 2 * kHour};
  const std::vector<WallWindow> w = Expand(course, 1806130800 - kHour, 1806300000 + kHour, 10);
  EXPECT_EQ(Begins(w), (std::vector<Instant>{1806130800, 1806213600, 1806300000}));
}

TEST(ReservationRecurrenceTest, WeekdaysInNewYorkSkipTheWeekendAndFollowTheChange) {
  // 2027-03-12 is a Friday (EST, 09:00 = 14:00Z); DST begins Sunday the 14th; Monday the
  // 15th 09:00 EDT = 13:00Z.
  const Recurrence office{"0 9 * * mon-fri", "America/New_York", 8 * kHour};
  const std::vector<WallWindow> w = Expand(office, 1804860000 - kHour, 1805115600 + kHour, 10);
  EXPECT_EQ(Begins(w), (std::vector<Instant>{1804860000, 1805115600}));
}

TEST(ReservationRecurrenceTest, ATimeInTheSpringGapStartsWhenTheClocksJump) {
  // 02:30 does not exist in Berlin on 2027-03-28: that window starts at 03:00 CEST.
  const Recurrence maint{"30 2 * * *", "Europe/Berlin", kHour};
  const std::vector<WallWindow> w = Expand(maint, 1806111000, 1806280200 + 1, 10);
  EXPECT_EQ(Begins(w), (std::vector<Instant>{1806111000, 1806195600, 1806280200}));
}

TEST(ReservationRecurrenceTest, ATimeThatOccursTwiceStartsOnceAtItsFirstInstant) {
  // 02:30 occurs twice in Berlin on 2027-10-31 (CEST, then CET an hour later).
  const Recurrence maint{"30 2 * * *", "Europe/Berlin", 30 * 60};
  const std::vector<WallWindow> w = Expand(maint, 1824856200, 1825032600 + 1, 10);
  EXPECT_EQ(Begins(w), (std::vector<Instant>{1824856200, 1824942600, 1825032600}));
}

TEST(ReservationRecurrenceTest, AnOpenWindowAtFromIsIncludedAndUntilExcludesLaterBegins) {
  const Instant jan1 = 1798761600;
  const Recurrence daily{"0 8 * * *", "UTC", 4 * kHour};
  // From 10:00 on the 1st: the 08:00-12:00 window is still open.
  const std::vector<WallWindow> w = Expand(daily, jan1 + 10 * kHour, jan1 + kDay + 8 * kHour, 10);
  EXPECT_EQ(Begins(w), std::vector<Instant>{jan1 + 8 * kHour});
  // From 12:00 it has ended.
  EXPECT_TRUE(Expand(daily, jan1 + 12 * kHour, jan1 + kDay + 8 * kHour, 10).empty());
}

TEST(ReservationRecurrenceTest, OccurrencesCloserThanTheDurationAreRefused) {
  EXPECT_EQ(CheckRecurrence({"0 * * * *", "", 90 * 60}).message(),
            "recurrence: occurrences at 2027-01-01 00:00 UTC and 2027-01-01 01:00 UTC are 3600 s "
            "apart, less than the duration 5400 s (windows may not overlap; a daylight-saving "
            "change shortens a day by an hour)");
  // A whole day every day: the spring change makes one day 23 hours long in Berlin.
  const Status day = CheckRecurrence({"0 0 * * *", "Europe/Berlin", 24 * kHour});
  EXPECT_EQ(day.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(day.message().find("2027-03-27 23:00 UTC and 2027-03-28 22:00 UTC"), std::string::npos)
      << day.message();
  EXPECT_TRUE(CheckRecurrence({"0 0 * * *", "UTC", 24 * kHour}).ok());
  // Half-hourly: the spring gap's times and the jump are one occurrence, not three at once.
  EXPECT_TRUE(CheckRecurrence({"*/30 * * * *", "Europe/Berlin", 30 * 60}).ok());
}

TEST(ReservationRecurrenceTest, WindowsNeverOverlapAndDoNotDependOnFrom) {
  // Expansion itself caps a window at the next occurrence, so whatever it is given it hands
  // the core disjoint windows, the same ones from any starting point.
  const Instant jan1 = 1798761600;
  const Recurrence r{"0 * * * *", "", 90 * 60};
  const std::vector<WallWindow> w = Expand(r, jan1, jan1 + 6 * kHour, 20);
  for (size_t i = 1; i < w.size(); ++i) EXPECT_GE(w[i].begin, w[i - 1].end);
  const std::vector<WallWindow> later = Expand(r, jan1 + 2 * kHour + 1, jan1 + 6 * kHour, 20);
  ASSERT_FALSE(later.empty());
  EXPECT_EQ(later.front(), (WallWindow{jan1 + 2 * kHour, jan1 + 3 * kHour}));
  EXPECT_EQ(later.back(), w.back());
}

TEST(ReservationRecurrenceTest, AtMostMaxCountAndRareDaysWithinTheHorizon) {
  const Instant jan1 = 1798761600;
  EXPECT_EQ(Expand({"*/5 * * * *", "", 60}, jan1, kInfinite, 7).size(), 7u);
  // 29 February: the next one after 2027-01-01 is in 2028.
  EXPECT_EQ(Begins(Expand({"0 0 29 2 *", "UTC", kHour}, jan1, kInfinite, 1)),
            std::vector<Instant>{1835395200});
}

TEST(ReservationRecurrenceTest, ErrorsSayWhatWasExpected) {
  const Status zone = CheckRecurrence({"0 8 * * *", "Mars/Olympus", kHour});
  EXPECT_EQ(zone.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(zone.message(),
            "time zone 'Mars/Olympus' is not in the time-zone database (/usr/share/zoneinfo); "
            "expected a name like Europe/Berlin, America/New_York or UTC");
  EXPECT_EQ(CheckRecurrence({"0 8 * * *", "", 0}).message(),
            "recurrence duration: expected 1 second to 366 days, got 0 seconds");
  EXPECT_EQ(CheckRecurrence({"0 8 * *", "UTC", kHour}).message(),
            "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 4");
  EXPECT_TRUE(CheckRecurrence({"0 8 * * mon-fri", "Europe/Berlin", kHour}).ok());
  const Result<std::vector<WallWindow>> bad = ExpandRecurrence({"0 8 * * *", "UTC", kHour}, -5, 0, 1);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(), "recurrence: -5 is outside 1970-9999");
}

}  // namespace
}  // namespace sluice::config
