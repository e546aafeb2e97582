// Dispatch windows (R-Q-1): syntax, open/closed at a wall time, and the next change.
#include "core/model/window.h"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

constexpr Instant kHour = 3600;
constexpr Instant kDay = 86400;
// 1970-01-05 was a Monday.
constexpr Instant kMonday = 4 * kDay;

DispatchWindows Windows(std::vector<std::string> texts) {
  Result<DispatchWindows> w = DispatchWindows::Parse(texts);
  EXPECT_TRUE(w.has_value()) << w.error().message();
  return w.has_value() ? std::move(w).value() : DispatchWindows();
}

TEST(WindowTest, NoWindowsIsAlwaysOpen) {
  DispatchWindows w;
  EXPECT_TRUE(w.IsOpen(0));
  EXPECT_EQ(w.NextChange(123), std::nullopt);
  EXPECT_EQ(w.NextOpening(123), 123);
}

TEST(WindowTest, ADailyWindowWrapsPastMidnight) {
  DispatchWindows w = Windows({"19:00-07:00"});
  EXPECT_TRUE(w.IsOpen(0));  // 00:00 Thursday
  EXPECT_TRUE(w.IsOpen(7 * kHour - 1));
  EXPECT_FALSE(w.IsOpen(7 * kHour));  // the end is exclusive
  EXPECT_FALSE(w.IsOpen(12 * kHour));
  EXPECT_TRUE(w.IsOpen(19 * kHour));  // the start is inclusive
  EXPECT_EQ(w.NextChange(0), 7 * kHour);
  EXPECT_EQ(w.NextChange(12 * kHour), 19 * kHour);
  EXPECT_EQ(w.NextOpening(12 * kHour), 19 * kHour);
  EXPECT_EQ(w.NextChange(19 * kHour), kDay + 7 * kHour);
  EXPECT_EQ(w.NextOpening(20 * kHour), 20 * kHour);
}

TEST(WindowTest, AWeeklyWindowWrapsPastSunday) {
  DispatchWindows w = Windows({"Fri 18:00-Mon 08:00"});
  EXPECT_FALSE(w.IsOpen(kMonday + 9 * kHour));
  EXPECT_TRUE(w.IsOpen(kMonday + 7 * kHour));
  EXPECT_TRUE(w.IsOpen(kMonday - kHour));  // Sunday 23:00
  EXPECT_EQ(w.NextOpening(kMonday + 9 * kHour), kMonday + 4 * kDay + 18 * kHour);
  EXPECT_EQ(w.NextChange(kMonday), kMonday + 8 * kHour);
}

TEST(WindowTest, SeveralWindowsUnite) {
  DispatchWindows w = Windows({"08:00-12:00", "11:00-13:00", "13:00-14:00"});
  EXPECT_EQ(w.intervals().size(), 7u);  // one merged interval per day
  EXPECT_TRUE(w.IsOpen(kMonday + 13 * kHour + 30 * 60));
  EXPECT_EQ(w.NextChange(kMonday + 9 * kHour), kMonday + 14 * kHour);
}

TEST(WindowTest, WindowsCoveringTheWeekNeverChange) {
  DispatchWindows w = Windows({"00:00-12:00", "12:00-00:00"});
  EXPECT_TRUE(w.always_open());
  EXPECT_EQ(w.NextChange(5), std::nullopt);
}

TEST(WindowTest, AWindowAcrossTheWeekBoundaryIsOneStretch) {
  DispatchWindows w = Windows({"Sun 20:00-Mon 04:00"});
  EXPECT_EQ(w.NextChange(kMonday - kHour), kMonday + 4 * kHour);  // no change at midnight
  EXPECT_EQ(w.NextChange(kMonday + 5 * kHour), kMonday + 6 * kDay + 20 * kHour);
}

TEST(WindowTest, NegativeWallTimesWork) {
  DispatchWindows w = Windows({"19:00-07:00"});
  EXPECT_TRUE(w.IsOpen(-kHour));  // Wednesday 23:00
  EXPECT_FALSE(w.IsOpen(-6 * kHour));
  EXPECT_EQ(w.NextChange(-6 * kHour), -5 * kHour);
}

TEST(WindowTest, RejectsBadWindows) {
  struct Case {
    std::string_view text;
    std::string_view message;
  };
  const std::string_view kSyntax =
      " is not a window \"hh:mm-hh:mm\" (00:00 to 23:59) or \"Ddd hh:mm-Ddd hh:mm\" (Ddd: Mon to "
      "Sun)";
  const Case cases[] = {
      {"25:00-07:00", ""},
      {"19:00", ""},
      {"19:00-7:00", ""},
      {"Mon 08:00-18:00", ""},
      {"Mo 08:00-Fri 18:00", ""},
      {"mon 08:00-fri 18:00", ""},
      {"", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Status status = DispatchWindows::Check(c.text);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), "'" + std::string(c.text) + "'" + std::string(kSyntax));
  }
  EXPECT_EQ(DispatchWindows::Check("08:00-08:00").message(),
            "'08:00-08:00' is empty (start equals end)");
  EXPECT_EQ(DispatchWindows::Check("Mon 08:00-Mon 08:00").message(),
            "'Mon 08:00-Mon 08:00' is empty (start equals end)");
  EXPECT_TRUE(DispatchWindows::Check("Mon 08:00-Fri 18:00").ok());
}

}  // namespace
}  // namespace sluice::core
