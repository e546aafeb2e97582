// Advance reservations in the cycle (R-RSV-2), one test per rule: a job outside a
// reservation must end by its run limit before a window on a host begins to start there;
// a job inside one runs only in its windows and on its hosts, ends with the window, and a
// MAINT window outranks it; only its users' jobs run in it; reasons name the reservation, its
// hosts and its window; the cycle wakes at window boundaries.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::StartOf;
using testing::Submit;

AdvanceReservationSpec Rsv(std::string name, std::vector<std::string> hosts,
                           std::vector<ReservationWindow> windows, bool maint = false,
                           Duration overrun = 0) {
  return AdvanceReservationSpec{.name = std::move(name),
                                .hosts = std::move(hosts),
                                .windows = std::move(windows),
                                .users = {"alice"},
                                .maint = maint,
                                .overrun = overrun};
}

// h1 and h2, one slot each; `course` keeps h1 over [100, 200).
ClusterState TwoHostsWithCourse(PolicyKind policy = PolicyKind::kFifo) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).Policy(policy).State();
  SLUICE_CHECK(Apply(ReservationsChanged{{Rsv("course", {"h1"}, {{100, 200}})}}, 0, state).ok());
  return state;
}

// The first detail of `code` in the reasons a cycle gave job `id`, or nullopt.
std::optional<ReasonDetail> DetailOf(const CycleResult& result, JobId id, ReasonCode code) {
  std::optional<PendingReasons> reasons = ReasonsOf(result, id);
  if (!reasons) return std::nullopt;
  for (const ReasonDetail& d : reasons->details) {
    if (d.code == code) return d;
  }
  return std::nullopt;
}

HostIndex HostOf(const CycleResult& result, JobId id) {
  const StartJob* start = StartOf(result, id);
  SLUICE_CHECK(start != nullptr && start->allocation.hosts.size() == 1);
  return start->allocation.hosts[0].host;
}

TEST(ReservationCycleTest, AJobWhoseRunLimitCrossesTheWindowStartsOnAnotherHost) {
  ClusterState state = TwoHostsWithCourse();
  Submit(state, JobBuilder(1).Limit(150));  // would run until 150 > 100
  CycleResult result = testing::CycleAndCommit(state, 0);
  ASSERT_NE(StartOf(result, 1), nullptr);
  EXPECT_EQ(HostOf(result, 1), 1u);  // h2, although h1 comes first
  // The next one finds only h1, which it would run into: it waits, naming the reservation.
  Submit(state, JobBuilder(2).Limit(150));
  result = testing::CycleAndCommit(state, 1);
  EXPECT_EQ(StartOf(result, 2), nullptr);
  // The main reason is the full host it could use (NO_RESOURCE ranks above the host-level
  // reasons, as for closed hosts); the reserved one is named beside it.
  std::optional<ReasonDetail> reserved = DetailOf(result, 2, ReasonCode::kHostReserved);
  ASSERT_TRUE(reserved.has_value());
  EXPECT_EQ(reserved->hosts, 1);
  EXPECT_EQ(reserved->scope, "reservation course");
  EXPECT_EQ(reserved->time, 100);
  EXPECT_EQ(reserved->until, 200);  // the whole window, and where it is
  EXPECT_EQ(reserved->host_names, "h1");
  // Where the reserved host is the only one, the reservation is the main reason.
  ClusterState one = ClusterBuilder().Hosts(1, 1).Policy(PolicyKind::kFifo).State();
  ASSERT_TRUE(Apply(ReservationsChanged{{Rsv("course", {"h1"}, {{100, 200}})}}, 0, one).ok());
  Submit(one, JobBuilder(1).Limit(150));
  EXPECT_EQ(ReasonsOf(testing::CycleAndCommit(one, 0), 1)->main, ReasonCode::kHostReserved);
}

TEST(ReservationCycleTest, AJobThatEndsBeforeTheWindowBeginsUsesTheReservedHost) {
  ClusterState state = TwoHostsWithCourse();
  Submit(state, JobBuilder(1).Limit(100));  // ends at 100: exactly when the window begins
  CycleResult result = testing::CycleAndCommit(state, 0);
  ASSERT_NE(StartOf(result, 1), nullptr);
  EXPECT_EQ(HostOf(result, 1), 0u);
}

TEST(ReservationCycleTest, AJobWithoutARunLimitNeverStartsOnAHostWithAWindowAhead) {
  ClusterState state = TwoHostsWithCourse();
  Submit(state, JobBuilder(1));
  Submit(state, JobBuilder(2));
  CycleResult result = testing::CycleAndCommit(state, 0);
  EXPECT_EQ(HostOf(result, 1), 1u);
  EXPECT_EQ(StartOf(result, 2), nullptr);
  EXPECT_TRUE(DetailOf(result, 2, ReasonCode::kHostReserved).has_value());
  // Once the window has ended the host is everyone's again.
  result = testing::CycleAndCommit(state, 200);
  ASSERT_NE(StartOf(result, 2), nullptr);
  EXPECT_EQ(HostOf(result, 2), 0u);
}

TEST(ReservationCycleTest, AJobInsideTheReservationRunsOnlyInItsWindowAndOnItsHosts) {
  ClusterState state = TwoHostsWithCourse();
  Submit(state, JobBuilder(1).User("alice").Reservation("course").Limit(50));
  CycleResult result = testing::CycleAndCommit(state, 0);
  EXPECT_EQ(StartOf(result, 1), nullptr);  // h2 is free, but the window is not open
  std::optional<PendingReasons> reasons = ReasonsOf(result, 1);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kReservationWait);
  EXPECT_EQ(reasons->details[0].scope, "reservation course");
  EXPECT_EQ(reasons->details[0].time, 100);
  EXPECT_EQ(reasons->details[0].until, 200);
  EXPECT_EQ(reasons->details[0].host_names, "h1");
  EXPECT_EQ(result.wake_at, 100);  // the cycle comes back when the window opens
  result = testing::CycleAndCommit(state, 100);
  ASSERT_NE(StartOf(result, 1), nullptr);
  EXPECT_EQ(HostOf(result, 1), 0u);
  // A second job of the reservation does not spill over to h2: h1 is taken.
  Submit(state, JobBuilder(2).User("alice").Reservation("course").Limit(50));
  result = testing::CycleAndCommit(state, 101);
  EXPECT_EQ(StartOf(result, 2), nullptr);
  EXPECT_NE(ReasonsOf(result, 2)->main, ReasonCode::kReservationWait);
}

TEST(ReservationCycleTest, AnotherUsersJobInsideTheReservationIsRefusedAndSkipped) {
  // course admits alice only. bob's job naming it does not start in the open window although
  // h1 is free, says why, and is not a head that holds up the queue: carol's job behind it
  // starts on h2.
  ClusterState state = TwoHostsWithCourse();
  Submit(state, JobBuilder(1).User("bob").Reservation("course").Limit(50));
  Submit(state, JobBuilder(2).User("carol").Limit(50).Submit(1));
  CycleResult result = testing::CycleAndCommit(state, 100);
  EXPECT_EQ(StartOf(result, 1), nullptr);
  ASSERT_NE(StartOf(result, 2), nullptr);
  EXPECT_EQ(HostOf(result, 2), 1u);
  std::optional<PendingReasons> reasons = ReasonsOf(result, 1);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kReservationDenied);
  std::optional<ReasonDetail> denied = DetailOf(result, 1, ReasonCode::kReservationDenied);
  ASSERT_TRUE(denied.has_value());
  EXPECT_EQ(denied->scope, "reservation course");
  // alice's job in the same window starts on h1.
  Submit(state, JobBuilder(3).User("alice").Reservation("course").Limit(50).Submit(100));
  result = testing::CycleAndCommit(state, 101);
  ASSERT_NE(StartOf(result, 3), nullptr);
  EXPECT_EQ(HostOf(result, 3), 0u);
  EXPECT_EQ(StartOf(result, 1), nullptr);
}

TEST(ReservationCycleTest, AReservationThatNamesGroupsLeavesMembershipToTheDrivers) {
  // The core reads no account database: with groups listed, a user who is not among the
  // users may be a member, which the controller checked at submission.
  ClusterState state = ClusterBuilder().Hosts(2, 1).Policy(PolicyKind::kFifo).State();
  AdvanceReservationSpec course = Rsv("course", {"h1"}, {{100, 200}});
  course.groups = {"physics"};
  ASSERT_TRUE(Apply(ReservationsChanged{{course}}, 0, state).ok());
  Submit(state, JobBuilder(1).User("bob").Reservation("course").Limit(50));
  CycleResult result = testing::CycleAndCommit(state, 100);
  ASSERT_NE(StartOf(result, 1), nullptr);
  EXPECT_EQ(HostOf(result, 1), 0u);
}

TEST(ReservationCycleTest, AJobInsideEndsWithTheWindowSoAMaintWindowAfterItDoesNotBlockIt) {
  // course [100, 200) then maintenance [250, 300) on h1. A job of the course without a run
  // limit ends with the window (200), before the maintenance: it may start. With an overrun
  // of 100 it would run until 300, into the maintenance: it may not.
  for (Duration overrun : {0, 100}) {
    ClusterState state = ClusterBuilder().Hosts(2, 1).Policy(PolicyKind::kFifo).State();
    ASSERT_TRUE(Apply(ReservationsChanged{{Rsv("course", {"h1"}, {{100, 200}}, false, overrun),
                                           Rsv("fix", {"h1"}, {{250, 300}}, true)}},
                      0, state)
                    .ok());
    Submit(state, JobBuilder(1).User("alice").Reservation("course"));
    CycleResult result = testing::CycleAndCommit(state, 100);
    if (overrun == 0) {
      EXPECT_NE(StartOf(result, 1), nullptr);
    } else {
      EXPECT_EQ(StartOf(result, 1), nullptr);
      std::optional<PendingReasons> reasons = ReasonsOf(result, 1);
      ASSERT_TRUE(reasons.has_value());
      EXPECT_EQ(reasons->main, ReasonCode::kHostReserved);
      std::optional<ReasonDetail> reserved = DetailOf(result, 1, ReasonCode::kHostReserved);
      ASSERT_TRUE(reserved.has_value());
      EXPECT_EQ(reserved->scope, "reservation fix");
      EXPECT_EQ(reserved->time, 250);
      // h2, outside its reservation, does not match it.
      EXPECT_TRUE(DetailOf(result, 1, ReasonCode::kNoMatch).has_value());
    }
  }
}

TEST(ReservationCycleTest, AMaintWindowOutranksTheReservationItOverlaps) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).Policy(PolicyKind::kFifo).State();
  ASSERT_TRUE(Apply(ReservationsChanged{{Rsv("course", {"h1"}, {{100, 400}}),
                                         Rsv("fix", {"h1"}, {{150, 250}}, true)}},
                    0, state)
                  .ok());
  Submit(state, JobBuilder(1).User("alice").Reservation("course").Limit(100));
  CycleResult result = testing::CycleAndCommit(state, 100);  // would run into the maintenance
  EXPECT_EQ(StartOf(result, 1), nullptr);
  result = testing::CycleAndCommit(state, 250);  // the maintenance is over
  EXPECT_NE(StartOf(result, 1), nullptr);
}

TEST(ReservationCycleTest, AnUnknownReservationIsRefusedAndADeletedOneLeavesItsJobsWaiting) {
  ClusterState state = TwoHostsWithCourse();
  const Status refused =
      Apply(JobSubmitted{JobBuilder(1).Reservation("nope").Build()}, 0, state);
  EXPECT_EQ(refused.code(), StatusCode::kNotFound) << refused.ToString();
  Submit(state, JobBuilder(2).User("alice").Reservation("course"));
  ASSERT_TRUE(Apply(ReservationsChanged{}, 0, state).ok());
  CycleResult result = testing::CycleAndCommit(state, 150);
  EXPECT_EQ(StartOf(result, 2), nullptr);
  std::optional<PendingReasons> reasons = ReasonsOf(result, 2);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kReservationWait);
  EXPECT_EQ(reasons->details[0].time, kInfinite);
  EXPECT_EQ(reasons->details[0].scope, "reservation course (deleted)");  // says it is gone
}

TEST(ReservationCycleTest, JobsOfOneShapeWithDifferentRunLimitsAreJudgedApart) {
  // The unsatisfiable cache keys by run limit when there are reservations: the long job's
  // failure on h1 must not be handed to the short one.
  ClusterState state = TwoHostsWithCourse(PolicyKind::kEasyBackfill);
  Submit(state, JobBuilder(1));              // takes h2
  Submit(state, JobBuilder(2).Limit(500));   // h1 only, runs into the window: waits
  Submit(state, JobBuilder(3).Limit(50));    // h1, ends before the window: starts
  CycleResult result = testing::CycleAndCommit(state, 0);
  EXPECT_EQ(StartOf(result, 2), nullptr);
  ASSERT_NE(StartOf(result, 3), nullptr);
  EXPECT_EQ(HostOf(result, 3), 0u);
}

TEST(ReservationCycleTest, BackfillAroundAReservationFillsTheHoleBeforeIt) {
  // EASY: the hole before the window on h1 takes a short job, not a long one.
  ClusterState state = TwoHostsWithCourse(PolicyKind::kEasyBackfill);
  Submit(state, JobBuilder(1).Limit(1000));  // h2
  Submit(state, JobBuilder(2).Limit(1000));  // only h1 left, crosses the window
  Submit(state, JobBuilder(3).Limit(90));    // fits before the window
  CycleResult result = testing::CycleAndCommit(state, 0);
  EXPECT_NE(StartOf(result, 1), nullptr);
  EXPECT_EQ(StartOf(result, 2), nullptr);
  ASSERT_NE(StartOf(result, 3), nullptr);
  EXPECT_EQ(HostOf(result, 3), 0u);
}

}  // namespace
}  // namespace sluice::core
