// crontab(5) schedules of recurring reservations (R-RSV-1): each field form, the two-day-field
// rule of Vixie cron, the macros, and each error naming its field.
#include "config/cron_schedule.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sluice::config {
namespace {

CronSchedule MustParse(const std::string& text) {
  Result<CronSchedule> schedule = CronSchedule::Parse(text);
  EXPECT_TRUE(schedule.has_value()) << text << ": " << schedule.error().message();
  return *schedule;
}

std::vector<unsigned> Minutes(const CronSchedule& s) {
  std::vector<unsigned> out;
  for (unsigned m = 0; m < 60; ++m) {
    if (s.MatchesMinute(m)) out.push_back(m);
  }
  return out;
}

std::string ErrorOf(const std::string& text) {
  Result<CronSchedule> schedule = CronSchedule::Parse(text);
  if (schedule) return "(parsed)";
  EXPECT_EQ(schedule.error().code(), StatusCode::kInvalidArgument);
  return schedule.error().message();
}

TEST(CronScheduleTest, WeekdayMornings) {
  const CronSchedule s = MustParse("0 8 * * mon-fri");
  EXPECT_EQ(Minutes(s), std::vector<unsigned>{0});
  EXPECT_TRUE(s.MatchesHour(8));
  EXPECT_FALSE(s.MatchesHour(9));
  for (unsigned wd = 1; wd <= 5; ++wd) EXPECT_TRUE(s.MatchesDay(17, wd)) << wd;
  EXPECT_FALSE(s.MatchesDay(17, 0));
  EXPECT_FALSE(s.MatchesDay(17, 6));
  for (unsigned m = 1; m <= 12; ++m) EXPECT_TRUE(s.MatchesMonth(m));
}

TEST(CronScheduleTest, StepsRangesAndLists) {
  EXPECT_EQ(Minutes(MustParse("*/15 * * * *")), (std::vector<unsigned>{0, 15, 30, 45}));
  EXPECT_EQ(Minutes(MustParse("10-30/10 * * * *")), (std::vector<unsigned>{10, 20, 30}));
  EXPECT_EQ(Minutes(MustParse("5/20 * * * *")), (std::vector<unsigned>{5, 25, 45}));
  EXPECT_EQ(Minutes(MustParse("1,3,50-52 * * * *")), (std::vector<unsigned>{1, 3, 50, 51, 52}));
  // A step past the field's end keeps the first value only (and does not overflow).
  EXPECT_EQ(Minutes(MustParse("7/4294967295 * * * *")), std::vector<unsigned>{7});
  const CronSchedule days = MustParse("0 0 1/4294967295 * *");
  EXPECT_TRUE(days.MatchesDay(1, 3));
  EXPECT_FALSE(days.MatchesDay(2, 3));
}

TEST(CronScheduleTest, NamesAnyCaseAndSundayAsSeven) {
  const CronSchedule s = MustParse("0 0 * JAN,Mar-may Sun");
  EXPECT_TRUE(s.MatchesMonth(1));
  EXPECT_FALSE(s.MatchesMonth(2));
  EXPECT_TRUE(s.MatchesMonth(4));
  EXPECT_TRUE(s.MatchesDay(3, 0));
  EXPECT_FALSE(s.MatchesDay(3, 1));
  const CronSchedule seven = MustParse("0 0 * * 7");
  EXPECT_TRUE(seven.MatchesDay(9, 0));
  EXPECT_FALSE(seven.MatchesDay(9, 6));
}

TEST(CronScheduleTest, BothDayFieldsRestrictedMatchEither) {
  const CronSchedule s = MustParse("0 0 13 * fri");
  EXPECT_TRUE(s.MatchesDay(13, 2));   // the 13th, a Tuesday
  EXPECT_TRUE(s.MatchesDay(14, 5));   // a Friday, the 14th
  EXPECT_FALSE(s.MatchesDay(14, 2));  // neither
}

TEST(CronScheduleTest, AStarredDayFieldMeansBothMustMatch) {
  const CronSchedule dom = MustParse("0 0 13 * *");
  EXPECT_TRUE(dom.MatchesDay(13, 2));
  EXPECT_FALSE(dom.MatchesDay(14, 5));
  // `*/2` starts with a star: it restricts the days but keeps the AND rule, as cron does.
  const CronSchedule odd_mondays = MustParse("0 0 */2 * mon");
  EXPECT_TRUE(odd_mondays.MatchesDay(3, 1));
  EXPECT_FALSE(odd_mondays.MatchesDay(2, 1));
  EXPECT_FALSE(odd_mondays.MatchesDay(3, 2));
}

TEST(CronScheduleTest, Macros) {
  const CronSchedule daily = MustParse("@daily");
  EXPECT_EQ(Minutes(daily), std::vector<unsigned>{0});
  EXPECT_TRUE(daily.MatchesHour(0));
  EXPECT_FALSE(daily.MatchesHour(1));
  const CronSchedule weekly = MustParse(" @weekly ");
  EXPECT_TRUE(weekly.MatchesDay(5, 0));
  EXPECT_FALSE(weekly.MatchesDay(5, 1));
  const CronSchedule hourly = MustParse("@hourly");
  EXPECT_TRUE(hourly.MatchesHour(13));
  EXPECT_EQ(ErrorOf("@fortnightly"),
            "cron: '@fortnightly' is not one of @yearly @annually @monthly @weekly @daily "
            "@midnight @hourly");
}

TEST(CronScheduleTest, ErrorsNameTheFieldAndWhatWasExpected) {
  EXPECT_EQ(ErrorOf("0 8 * *"),
            "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 4");
  EXPECT_EQ(ErrorOf(""),
            "cron: expected 5 fields (minute hour day-of-month month day-of-week), got 0");
  EXPECT_EQ(ErrorOf("0 25 * * *"), "cron field 2 (hour): 25 is out of 0-23");
  EXPECT_EQ(ErrorOf("0 0 0 * *"), "cron field 3 (day-of-month): 0 is out of 1-31");
  EXPECT_EQ(ErrorOf("x 0 * * *"), "cron field 1 (minute): 'x' is not a number");
  EXPECT_EQ(ErrorOf("0 0 * foo *"), "cron field 4 (month): 'foo' is not a month name");
  EXPECT_EQ(ErrorOf("0 0 * * fri-mon"), "cron field 5 (day-of-week): range fri-mon runs backwards");
  EXPECT_EQ(ErrorOf("*/0 0 * * *"), "cron field 1 (minute): step '0' is not a whole number above 0");
  EXPECT_EQ(ErrorOf("1,,2 0 * * *"), "cron field 1 (minute): has an empty list item");
  EXPECT_EQ(ErrorOf("0 0 * * 8"), "cron field 5 (day-of-week): 8 is out of 0-7");
}

TEST(CronScheduleTest, ADayThatNeverOccursIsRefused) {
  EXPECT_EQ(ErrorOf("0 0 31 2 *"),
            "cron: never matches (no day of month given occurs in the months given)");
  EXPECT_EQ(ErrorOf("0 0 30,31 feb *"),
            "cron: never matches (no day of month given occurs in the months given)");
  MustParse("0 0 29 2 *");    // leap years
  MustParse("0 0 31 2 mon");  // Mondays in February (either day field)
}

}  // namespace
}  // namespace sluice::config
