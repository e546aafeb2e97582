#include "drmaa/time_values.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

constexpr int64_t kNow = 1764450000;  // 2025-11-29 21:00:00 UTC

// Times without a zone are local: the tests fix the zone to UTC.
class TimeValuesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

TEST_F(TimeValuesTest, ReadsEveryStartTimeForm) {
  struct Case {
    std::string_view text;
    int64_t want;
  };
  const Case cases[] = {
      {"22:00", kNow + 3600},                   // today
      {"21:00:30", kNow + 30},
      {"30 00:00", 1764460800},                 // day of this month
      {"11/30 00:00", 1764460800},              // month and day
      {"26/12/05 10:00", 1796464800},           // YY/MM/DD
      {"2026/12/05 10:00", 1796464800},         // CCYY/MM/DD
      {"20/26/12/05 10:00", 1796464800},        // CC/YY/MM/DD
      {"2026/12/05 10:00 +01:30", 1796464800 - 5400},
      {"2026/12/05 10:00 -02:00", 1796464800 + 7200},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Expected<int64_t> at = ParseStartTime(c.text, kNow);
    ASSERT_TRUE(at) << at.error().diagnosis();
    EXPECT_EQ(*at, c.want);
  }
}

TEST_F(TimeValuesTest, RefusesStartTimesNamingTheForm) {
  for (std::string_view text : {"", "noon", "2026/12/05", "10", "10:5", "10:00 +1", "1/2/3/4/5 10:00",
                                "10:00 +01:00 x"}) {
    SCOPED_TRACE(text);
    Expected<int64_t> at = ParseStartTime(text, kNow);
    ASSERT_FALSE(at);
    EXPECT_EQ(at.error().code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT);
  }
  for (std::string_view text : {"2026/02/30 10:00", "25:00", "2026/13/01 10:00"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(ParseStartTime(text, kNow).error().code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
  }
}

TEST_F(TimeValuesTest, ReadsTimeAmounts) {
  EXPECT_EQ(*ParseTimeAmount("90", "a"), 90);
  EXPECT_EQ(*ParseTimeAmount("2:30", "a"), 150);
  EXPECT_EQ(*ParseTimeAmount("1:00:05", "a"), 3605);
  EXPECT_EQ(*ParseTimeAmount("0:120:0", "a"), 7200);
  for (std::string_view text : {"", "1:2:3:4", "x", "1:", "-5", "1.5"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(ParseTimeAmount(text, "a").error().code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT);
  }
  EXPECT_EQ(ParseTimeAmount("0:0", "a").error().code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
}

}  // namespace
}  // namespace sluice::drmaa
