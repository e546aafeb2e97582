// RuntimeHistory keeps each user's last runtimes; ClusterState::Finish feeds it.
#include "core/model/runtime_history.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/cycle/events.h"
#include "core/model/predictive_config.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

TEST(RuntimeHistoryTest, NoHistoryGivesNothing) {
  RuntimeHistory history;
  EXPECT_EQ(history.MeanOfLast("u1", 2), std::nullopt);
  EXPECT_EQ(history.Count("u1"), 0);
  history.Record("u1", 100);
  EXPECT_EQ(history.MeanOfLast("u1", 0), std::nullopt);
  EXPECT_EQ(history.MeanOfLast("u2", 2), std::nullopt);
}

TEST(RuntimeHistoryTest, MeanOfTheLastRunsRoundedUp) {
  RuntimeHistory history;
  history.Record("u1", 100);
  EXPECT_EQ(history.MeanOfLast("u1", 2), 100);  // one run only
  history.Record("u1", 301);
  EXPECT_EQ(history.MeanOfLast("u1", 2), 201);  // ceil(401 / 2)
  history.Record("u1", 50);
  EXPECT_EQ(history.MeanOfLast("u1", 1), 50);
  EXPECT_EQ(history.MeanOfLast("u1", 2), 176);  // ceil((301 + 50) / 2)
  EXPECT_EQ(history.MeanOfLast("u1", 3), 151);  // (100 + 301 + 50) / 3 = 150.33
  history.Record("u1", -5);                     // clock skew: counts as 0
  EXPECT_EQ(history.MeanOfLast("u1", 1), 0);
}

TEST(RuntimeHistoryTest, KeepsOnlyTheLastKeptRuns) {
  RuntimeHistory history;
  for (int i = 1; i <= RuntimeHistory::kKept + 3; ++i) history.Record("u1", i * 10);
  EXPECT_EQ(history.Count("u1"), RuntimeHistory::kKept);
  // Runs 4..11 are kept: mean (40 + ... + 110) / 8 = 75.
  EXPECT_EQ(history.MeanOfLast("u1", RuntimeHistory::kKept), 75);
  EXPECT_EQ(history.MeanOfLast("u1", 100), 75);
}

TEST(RuntimeHistoryTest, FinishRecordsTheRuntimeOfTheJobsUser) {
  ClusterState state = testing::ClusterBuilder().Hosts(4, 1).State();
  testing::SubmitRunning(state, testing::JobBuilder(1).User("ann").Tasks(1).Limit(900), 100);
  testing::SubmitRunning(state, testing::JobBuilder(2).User("bob").Tasks(1).Limit(900), 100);
  ASSERT_TRUE(Apply(JobFinished{.job = 1}, 400, state).ok());
  ASSERT_TRUE(Apply(JobFinished{.job = 2, .exit_code = 1}, 150, state).ok());
  EXPECT_EQ(state.usage().runtimes().MeanOfLast("ann", 2), 300);
  EXPECT_EQ(state.usage().runtimes().MeanOfLast("bob", 2), 50);  // failed runs count too
  EXPECT_EQ(state.Clone().usage().runtimes().MeanOfLast("ann", 2), 300);
}

// The rings by run limit are kept sorted for lookup: limits first seen in any order, each
// new one inserted before, between or after the others, are all found with their own runs.
TEST(RuntimeHistoryTest, RunLimitsFirstSeenInAnyOrderAreEachFound) {
  RuntimeHistory history;
  const std::vector<Duration> limits = {7200, 60, 3600, 86400, 600, 1};
  for (size_t i = 0; i < limits.size(); ++i) {
    history.Record("u1", static_cast<Duration>(10 * (i + 1)), limits[i]);
  }
  history.Record("u1", 15, 60);  // an existing ring, after the inserts
  for (size_t i = 0; i < limits.size(); ++i) {
    const Duration expected = limits[i] == 60 ? 18 : static_cast<Duration>(10 * (i + 1));
    EXPECT_EQ(history.MeanOfLastWithLimit("u1", limits[i], 8), expected) << limits[i];
  }
  EXPECT_EQ(history.MeanOfLastWithLimit("u1", 2, 8), std::nullopt);
  EXPECT_EQ(history.MeanOfLastWithLimit("u1", 100000, 8), std::nullopt);
}

TEST(RuntimeHistoryTest, SameRunLimitHistoryIsKeptApart) {
  RuntimeHistory history;
  history.Record("u1", 100, 3600);
  history.Record("u1", 2000, 7200);
  history.Record("u1", 301, 3600);
  history.Record("u1", 50);  // no run limit: counted for the user only
  EXPECT_EQ(history.MeanOfLastWithLimit("u1", 3600, 2), 201);  // ceil((100 + 301) / 2)
  EXPECT_EQ(history.MeanOfLastWithLimit("u1", 7200, 2), 2000);
  EXPECT_EQ(history.MeanOfLastWithLimit("u1", 60, 2), std::nullopt);  // no job with it
  EXPECT_EQ(history.MeanOfLastWithLimit("u2", 3600, 2), std::nullopt);
  EXPECT_EQ(history.MeanOfLastWithLimit("u1", 3600, 0), std::nullopt);
  EXPECT_EQ(history.MeanOfLast("u1", 2), 176);  // the user's last two: 301 and 50
  EXPECT_EQ(history.Count("u1"), 4);
}

TEST(RuntimeHistoryTest, FinishRecordsTheRunLimitToo) {
  ClusterState state = testing::ClusterBuilder().Hosts(4, 1).State();
  testing::SubmitRunning(state, testing::JobBuilder(1).User("ann").Tasks(1).Limit(900), 100);
  testing::SubmitRunning(state, testing::JobBuilder(2).User("ann").Tasks(1).Limit(60), 100);
  ASSERT_TRUE(Apply(JobFinished{.job = 1}, 400, state).ok());
  ASSERT_TRUE(Apply(JobFinished{.job = 2}, 150, state).ok());
  EXPECT_EQ(state.usage().runtimes().MeanOfLastWithLimit("ann", 900, 2), 300);
  EXPECT_EQ(state.usage().runtimes().MeanOfLastWithLimit("ann", 60, 2), 50);
  EXPECT_EQ(state.usage().runtimes().MeanOfLast("ann", 2), 175);
}

TEST(RuntimeHistoryTest, TrueRuntimesAreEmptyUnlessTheStudySetsThem) {
  RuntimeHistory history;
  EXPECT_EQ(history.TrueRuntime(7), std::nullopt);
  history.SetTrueRuntime(7, 42);
  EXPECT_EQ(history.TrueRuntime(7), 42);
  EXPECT_EQ(history.TrueRuntime(8), std::nullopt);
}

TEST(PredictiveConfigTest, HistoryMatchNamesAreCompleteAndParse) {
  for (HistoryMatch match : {HistoryMatch::kUser, HistoryMatch::kUserLimit}) {
    EXPECT_NE(ToString(match), "unknown");
    EXPECT_EQ(ParseHistoryMatch(ToString(match)), match);
  }
  EXPECT_EQ(ParseHistoryMatch("limit"), std::nullopt);
}

TEST(PredictiveConfigTest, OrderNamesAreCompleteAndParse) {
  for (BackfillOrder order :
       {BackfillOrder::kQueue, BackfillOrder::kShortest, BackfillOrder::kExpansion}) {
    EXPECT_NE(ToString(order), "unknown");
    EXPECT_EQ(ParseBackfillOrder(ToString(order)), order);
  }
  EXPECT_EQ(ParseBackfillOrder("sjf"), std::nullopt);
  EXPECT_EQ(ToString(PolicyKind::kPredictiveBackfill), "predictive_backfill");
  EXPECT_EQ(ParsePolicyKind("predictive_backfill"), PolicyKind::kPredictiveBackfill);
}

}  // namespace
}  // namespace sluice::core
