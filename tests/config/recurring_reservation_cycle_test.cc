// A recurring reservation in a named time zone, through the cycle (R-RSV-2): after Berlin's
// spring change the daily 08:00 window begins an hour earlier in UTC, and the core keeps
// jobs out of it (and lets the reservation's own in) at the shifted times — the drivers
// expand the recurrence, the core sees only windows.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "config/reservation_recurrence.h"
#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::config {
namespace {

using core::ReasonCode;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::StartOf;
using testing::Submit;

constexpr Instant kMinute = 60;
// 2027-03-28 08:00 CEST, the first morning of summer time: 06:00Z (07:00Z the day before).
constexpr Instant kSummerMorning = 1806213600;

// One host, h1, kept every morning 08:00-10:00 Berlin time for alice.
core::ClusterState CourseCluster() {
  core::ClusterState state = testing::ClusterBuilder().Hosts(1, 1).State();
  const Recurrence course{"0 8 * * *", "Europe/Berlin", 2 * 3600};
  Result<std::vector<WallWindow>> windows =
      ExpandRecurrence(course, kSummerMorning - 2 * 86400, kSummerMorning + 2 * 86400, 10);
  SLUICE_CHECK(windows.has_value());
  core::AdvanceReservationSpec spec{.name = "course", .hosts = {"h1"}, .users = {"alice"}};
  for (const WallWindow& w : *windows) spec.windows.push_back({w.begin, w.end});
  SLUICE_CHECK(core::Apply(core::ReservationsChanged{{spec}}, 0, state).ok());
  return state;
}

TEST(RecurringReservationCycleTest, AJobThatWouldRunIntoTheShiftedWindowWaits) {
  core::ClusterState state = CourseCluster();
  // At 05:00Z a 90-minute job would end at 06:30Z: before the window in winter time
  // (07:00Z), inside it in summer time.
  Submit(state, JobBuilder(1).User("bob").Limit(90 * kMinute));
  const core::CycleResult result = testing::CycleAndCommit(state, kSummerMorning - 60 * kMinute);
  EXPECT_EQ(StartOf(result, 1), nullptr);
  const std::optional<core::PendingReasons> reasons = ReasonsOf(result, 1);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kHostReserved);
  ASSERT_FALSE(reasons->details.empty());
  EXPECT_EQ(reasons->details[0].time, kSummerMorning);
}

TEST(RecurringReservationCycleTest, AJobThatEndsBeforeTheShiftedWindowStarts) {
  core::ClusterState state = CourseCluster();
  Submit(state, JobBuilder(1).User("bob").Limit(50 * kMinute));
  EXPECT_NE(StartOf(testing::CycleAndCommit(state, kSummerMorning - 60 * kMinute), 1), nullptr);
}

TEST(RecurringReservationCycleTest, TheReservationsUserRunsFromTheShiftedBegin) {
  core::ClusterState state = CourseCluster();
  Submit(state, JobBuilder(1).User("alice").Reservation("course").Limit(30 * kMinute));
  core::CycleResult early = testing::CycleAndCommit(state, kSummerMorning - kMinute);
  EXPECT_EQ(StartOf(early, 1), nullptr);
  EXPECT_EQ(ReasonsOf(early, 1)->main, ReasonCode::kReservationWait);
  EXPECT_NE(StartOf(testing::CycleAndCommit(state, kSummerMorning), 1), nullptr);
}

}  // namespace
}  // namespace sluice::config
