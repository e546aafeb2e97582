// One cycle per test under easy_backfill on interchangeable slots: the textbook decisions
// of R-SIM-1e, worked out by hand in each test's comment.
#include <gtest/gtest.h>

#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Started;
using testing::StartOf;
using testing::Submit;
using testing::SubmitRunning;

CycleResult Cycle(const ClusterState& state, Instant now) {
  return testing::ExplainedCycle(state, now);
}

// 10 slots; job 1 runs on 6 until t=100. Head 2 needs 8: S = 100, extra = 4 + 6 - 8 = 2.
ClusterState BlockedHead() {
  ClusterState state = ClusterBuilder().Hosts(10, 1).Policy(PolicyKind::kEasyBackfill).State();
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(100), 0);
  Submit(state, JobBuilder(2).Tasks(8).Limit(50).Submit(5));
  return state;
}

TEST(EasyCycleTest, JobEndingBeforeTheShadowTimeIsBackfilled) {
  ClusterState state = BlockedHead();
  Submit(state, JobBuilder(3).Tasks(4).Limit(90).Submit(6));  // 10 + 90 = 100 <= S
  CycleResult result = Cycle(state, 10);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  ASSERT_NE(StartOf(result, 3), nullptr);
  EXPECT_TRUE(StartOf(result, 3)->backfilled);
  EXPECT_EQ(result.stats.backfilled, 1);
  EXPECT_EQ(ReasonsOf(result, 2)->main, ReasonCode::kNoResource);
}

TEST(EasyCycleTest, JobThatWouldDelayTheHeadIsReserved) {
  ClusterState state = BlockedHead();
  Submit(state, JobBuilder(3).Tasks(4).Limit(91).Submit(6));  // ends 101 > S, 4 > extra 2
  CycleResult result = Cycle(state, 10);
  EXPECT_TRUE(Started(result).empty());
  auto reasons = ReasonsOf(result, 3);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kReserved);
  EXPECT_EQ(reasons->details[0].job, 2);
  EXPECT_EQ(reasons->details[0].time, 100);
}

TEST(EasyCycleTest, ExtraSlotsAreUsedOnceAndShrink) {
  ClusterState state = BlockedHead();
  Submit(state, JobBuilder(3).Tasks(2).Limit(500).Submit(6));  // 2 <= extra: starts, extra 0
  Submit(state, JobBuilder(4).Tasks(1).Limit(500).Submit(7));  // 1 > extra 0: reserved
  Submit(state, JobBuilder(5).Tasks(1).Limit(20).Submit(8));   // 30 <= S: starts anyway
  CycleResult result = Cycle(state, 10);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3, 5}));
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kReserved);
}

TEST(EasyCycleTest, JobWithoutRunLimitOnlyBackfillsIntoExtra) {
  ClusterState state = BlockedHead();
  Submit(state, JobBuilder(3).Tasks(3).Submit(6));  // never ends by S, 3 > extra
  Submit(state, JobBuilder(4).Tasks(2).Submit(7));  // 2 <= extra
  CycleResult result = Cycle(state, 10);
  EXPECT_EQ(Started(result), (std::vector<JobId>{4}));
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kReserved);
}

TEST(EasyCycleTest, OverrunningJobIsExpectedToEndNow) {
  // Job 1 was estimated to end at t=5 but still runs at t=10: expected end = 10 = S.
  ClusterState state = ClusterBuilder().Hosts(10, 1).Policy(PolicyKind::kEasyBackfill).State();
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(5), 0);
  Submit(state, JobBuilder(2).Tasks(8).Submit(1));           // S = 10, extra = 2
  Submit(state, JobBuilder(3).Tasks(3).Limit(1).Submit(2));  // 11 > 10 and 3 > 2
  Submit(state, JobBuilder(4).Tasks(4).Limit(0).Submit(3));  // zero estimate: 10 <= 10
  CycleResult result = Cycle(state, 10);
  EXPECT_EQ(Started(result), (std::vector<JobId>{4}));
  EXPECT_EQ(ReasonsOf(result, 3)->details[0].time, 10);
}

TEST(EasyCycleTest, RunningJobWithoutLimitMakesTheShadowTimeUnknown) {
  ClusterState state = ClusterBuilder().Hosts(10, 1).Policy(PolicyKind::kEasyBackfill).State();
  SubmitRunning(state, JobBuilder(1).Tasks(6), 0);
  Submit(state, JobBuilder(2).Tasks(8).Submit(1));
  Submit(state, JobBuilder(3).Tasks(2).Submit(2));              // no end: extra is 0
  Submit(state, JobBuilder(4).Tasks(2).Limit(1000).Submit(3));  // finite end <= unknown S
  CycleResult result = Cycle(state, 10);
  EXPECT_EQ(Started(result), (std::vector<JobId>{4}));
  EXPECT_EQ(ReasonsOf(result, 3)->details[0].time, kInfinite);
}

TEST(EasyCycleTest, JobsStartedEarlierInTheCycleCountAsRunning) {
  // Job 1 starts (6 of 10 slots, until 100); head 2 (8) is blocked: S = 100, extra = 2.
  ClusterState state = ClusterBuilder().Hosts(10, 1).Policy(PolicyKind::kEasyBackfill).State();
  Submit(state, JobBuilder(1).Tasks(6).Limit(100));
  Submit(state, JobBuilder(2).Tasks(8).Limit(10));
  Submit(state, JobBuilder(3).Tasks(3).Limit(200));  // reserved
  Submit(state, JobBuilder(4).Tasks(2).Limit(200));  // extra
  CycleResult result = Cycle(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 4}));
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kReserved);
}

TEST(EasyCycleTest, JobThatDoesNotFitNowIsShortOfSlots) {
  ClusterState state = BlockedHead();
  Submit(state, JobBuilder(3).Tasks(5).Limit(1).Submit(6));  // 5 > 4 free
  CycleResult result = Cycle(state, 10);
  EXPECT_TRUE(Started(result).empty());
  auto reasons = ReasonsOf(result, 3);
  EXPECT_EQ(reasons->main, ReasonCode::kNoResource);
  EXPECT_EQ(reasons->details[0].available, 4);
}

TEST(EasyCycleTest, ExplainingChangesNoDecision) {
  ClusterState state = ClusterBuilder().Hosts(8, 1).Policy(PolicyKind::kEasyBackfill).State();
  SubmitRunning(state, JobBuilder(100).Tasks(5).Limit(40), 0);
  for (JobId id = 1; id <= 30; ++id) {
    Submit(state, JobBuilder(id).Tasks(1 + id % 6).Limit(10 * (id % 7)).Submit(id));
  }
  Scheduler scheduler;
  EXPECT_EQ(Started(scheduler.RunCycle(state, 31, {.explain = false})),
            Started(scheduler.RunCycle(state, 31, {.explain = true})));
}

}  // namespace
}  // namespace sluice::core
