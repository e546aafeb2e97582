// Estimated start times under predictive_backfill (issue 20): the forecast runs each job of a
// predictive_backfill queue for its predicted runtime (runtime_prediction.h) instead of its
// run limit, and the estimate says so; other queues' estimates are unchanged.
#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "core/driver/forecast.h"
#include "testing/builders.h"
#include "wire/estimate_json.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

// 2 slots. User "short" ran 10 s and 30 s (predicted 20 s). At t=410 job 1 of "short" runs
// on both slots with a run limit of 1000 s; job 2 (2 slots) waits. Under predictive_backfill
// job 1 is predicted to end at 410 + 20 = 430, so job 2 is estimated to start at 430; on run
// limits (easy_backfill) at 410 + 1000 = 1410.
ClusterState Waiting(PolicyKind policy) {
  ClusterState state =
      ClusterBuilder().Hosts(2, 1).Queue(QueueSpec{.name = "normal", .policy = policy}).State();
  Instant t = 0;
  JobId id = 101;
  for (Duration runtime : {10, 30}) {
    SubmitRunning(state, JobBuilder(id).User("short").Tasks(1).Limit(1000), t);
    SLUICE_CHECK(Apply(JobFinished{.job = id}, t + runtime, state).ok());
    t += runtime;
    ++id;
  }
  SubmitRunning(state, JobBuilder(1).User("short").Tasks(2).Limit(1000), 410);
  Submit(state, JobBuilder(2).Tasks(2).Limit(50).Submit(405));
  return state;
}

TEST(PredictedForecastTest, PredictiveQueueEstimatesFromPredictionsAndSaysSo) {
  const auto estimates = EstimateStarts(Waiting(PolicyKind::kPredictiveBackfill), 410, {});
  ASSERT_TRUE(estimates.contains(2));
  EXPECT_EQ(estimates.at(2).start, 430);
  EXPECT_TRUE(estimates.at(2).predicted);
  EXPECT_EQ(wire::EstimateText(estimates.at(2)), "t=430 (from predicted runtimes)");
  nlohmann::ordered_json j;
  wire::AddEstimateJson(estimates.at(2), j);
  EXPECT_EQ(j.dump(), R"({"estimated_start":430,"estimated_from":"predicted runtimes"})");
}

TEST(PredictedForecastTest, OtherPoliciesEstimateFromRunLimits) {
  const auto estimates = EstimateStarts(Waiting(PolicyKind::kEasyBackfill), 410, {});
  ASSERT_TRUE(estimates.contains(2));
  EXPECT_EQ(estimates.at(2).start, 1410);
  EXPECT_FALSE(estimates.at(2).predicted);
  EXPECT_EQ(wire::EstimateText(estimates.at(2)), "t=1410");
  nlohmann::ordered_json j;
  wire::AddEstimateJson(estimates.at(2), j);
  EXPECT_EQ(j.dump(), R"({"estimated_start":1410})");
}

// A running job that outlived its prediction is expected to run to its run limit (the
// correction of runtime_prediction.h): at t=500 job 1 (predicted end 430) ends by 1410.
TEST(PredictedForecastTest, OverrunPredictionFallsBackToTheRunLimit) {
  const auto estimates = EstimateStarts(Waiting(PolicyKind::kPredictiveBackfill), 500, {});
  EXPECT_EQ(estimates.at(2).start, 1410);
  EXPECT_TRUE(estimates.at(2).predicted);
}

}  // namespace
}  // namespace sluice::core
