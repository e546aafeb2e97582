// `sluice rsv` option values (R-RSV-1): each time form in local time and with a zone, across a
// daylight-saving change; each duration form; host lists with ranges; and what each error
// names.
#include "client/rsv_args.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace sluice::client {
namespace {

// 2026-12-06 12:00 UTC, 13:00 in Berlin (UTC+1 in winter, UTC+2 in summer).
constexpr int64_t kNow = 1796558400;
constexpr int64_t k15Utc = 1796569200;  // 2026-12-06 15:00 UTC = 16:00 Berlin

class RsvArgsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_ = tz == nullptr ? "" : tz;
    had_tz_ = tz != nullptr;
    setenv("TZ", "Europe/Berlin", 1);
    tzset();
  }
  void TearDown() override {
    if (had_tz_) {
      setenv("TZ", saved_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  std::string saved_;
  bool had_tz_ = false;
};

TEST_F(RsvArgsTest, EveryTimeForm) {
  struct Case {
    std::string_view text;
    int64_t at;
  };
  const Case cases[] = {
      {"now", kNow},
      {"now+30m", kNow + 1800},
      {"+2h", kNow + 7200},
      {"now+1h30m", kNow + 5400},
      {"2026-12-06T16:00", k15Utc},  // local (Berlin, winter)
      {"2026-12-06T16:00:30", k15Utc + 30},
      {"2026-12-06 16:00", k15Utc},
      {"2026-12-06T15:00Z", k15Utc},
      {"2026-12-06T16:00+01:00", k15Utc},
      {"2026-12-06T10:30-0430", k15Utc},
      {"2026-07-01T12:00", 1782900000},    // local in summer: UTC+2
      {"2026-12-06", k15Utc - 16 * 3600},  // local midnight
      {"16:00", k15Utc},                   // LSF: later today
      {"12:00", k15Utc + 20 * 3600},       // LSF: passed today, so tomorrow
      {"6:16:00", k15Utc},                 // LSF day:hour:minute
      {"12:6:16:00", k15Utc},              // LSF month:day:hour:minute
      {"2026:12:6:16:00", k15Utc},         // LSF year:month:day:hour:minute
      {"1796569200", k15Utc},              // epoch seconds
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Result<int64_t> at = ParseRsvTime(c.text, "-b", kNow);
    ASSERT_TRUE(at.has_value()) << at.error().message();
    EXPECT_EQ(*at, c.at);
  }
}

TEST_F(RsvArgsTest, BadTimesNameTheOptionAndTheForms) {
  for (std::string_view bad :
       {"", "tomorrow", "25:00", "12:60", "2026-13-01T10:00", "2026-02-30T10:00", "2026-12-06T16",
        "2026-12-06T16:00+25:00", "2026-12-06T16:00X", "32:16:00", "now+", "now+abc", "+0", "12345",
        "1:2:3:4:5:6"}) {
    SCOPED_TRACE(bad);
    Result<int64_t> at = ParseRsvTime(bad, "-e", kNow);
    ASSERT_FALSE(at.has_value());
    EXPECT_EQ(at.error().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(at.error().message().starts_with("-e " + std::string(bad) + ": expected a time"))
        << at.error().message();
  }
}

TEST_F(RsvArgsTest, EveryDurationForm) {
  struct Case {
    std::string_view text;
    int64_t seconds;
  };
  const Case cases[] = {{"90m", 5400},         {"2h", 7200},     {"1d", 86400},     {"45s", 45},
                        {"1h30m", 5400},       {"1w", 604800},   {"1:30:00", 5400}, {"1:30", 5400},
                        {"1-00:00:00", 86400}, {"2-12", 216000}, {"90", 5400}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Result<int64_t> seconds = ParseRsvDuration(c.text, "-d");
    ASSERT_TRUE(seconds.has_value()) << seconds.error().message();
    EXPECT_EQ(*seconds, c.seconds);
  }
}

TEST_F(RsvArgsTest, BadDurationsNameTheOption) {
  for (std::string_view bad : {"", "abc", "2x", "h", "1:75", "1:2:3:4", "-5", "1.5h", "m30"}) {
    SCOPED_TRACE(bad);
    Result<int64_t> seconds = ParseRsvDuration(bad, "--overrun");
    ASSERT_FALSE(seconds.has_value());
    EXPECT_EQ(seconds.error().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(seconds.error().message().starts_with("--overrun " + std::string(bad) +
                                                      ": expected a duration"))
        << seconds.error().message();
  }
  for (std::string_view zero : {"0", "0m", "0:00:00"}) {
    SCOPED_TRACE(zero);
    Result<int64_t> seconds = ParseRsvDuration(zero, "-d");
    ASSERT_FALSE(seconds.has_value());
    EXPECT_EQ(seconds.error().message(),
              "-d " + std::string(zero) + ": the duration must be positive");
  }
}

TEST(ExpandHostListTest, NamesAndRanges) {
  struct Case {
    std::string_view text;
    std::vector<std::string> hosts;
  };
  const Case cases[] = {
      {"h1", {"h1"}},
      {"h[1-3]", {"h1", "h2", "h3"}},
      {"h[01-03],gpu1", {"h01", "h02", "h03", "gpu1"}},
      {"a b", {"a", "b"}},
      {"h[1-2,5]", {"h1", "h2", "h5"}},
      {"n[1-2]-ib", {"n1-ib", "n2-ib"}},
      {"h1,h[1-2]", {"h1", "h2"}},  // duplicates once, in order
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Result<std::vector<std::string>> hosts = ExpandHostList(c.text, "-m");
    ASSERT_TRUE(hosts.has_value()) << hosts.error().message();
    EXPECT_EQ(*hosts, c.hosts);
  }
}

TEST(ExpandHostListTest, BadListsNameTheOption) {
  for (std::string_view bad :
       {"", ",", "h[1-", "h[3-1]", "h[a-b]", "h$", "h[1-2][3-4]", "h[1-200000]", "h]"}) {
    SCOPED_TRACE(bad);
    Result<std::vector<std::string>> hosts = ExpandHostList(bad, "-m");
    ASSERT_FALSE(hosts.has_value());
    EXPECT_EQ(hosts.error().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(hosts.error().message().starts_with("-m " + std::string(bad) + ": "))
        << hosts.error().message();
  }
}

TEST(SplitNameListTest, CommasAndSpaces) {
  EXPECT_EQ(*SplitNameList("alice,bob carol", "-u"),
            (std::vector<std::string>{"alice", "bob", "carol"}));
  EXPECT_FALSE(SplitNameList(" , ", "-u").has_value());
}

TEST(DurationTextTest, Units) {
  EXPECT_EQ(DurationText(5400), "1h30m");
  EXPECT_EQ(DurationText(86400), "1d");
  EXPECT_EQ(DurationText(45), "45s");
  EXPECT_EQ(DurationText(0), "0s");
}

}  // namespace
}  // namespace sluice::client
