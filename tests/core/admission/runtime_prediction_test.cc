// Runtime prediction and its correction (runtime_prediction.h), on hand-computed cases.
#include "core/admission/runtime_prediction.h"

#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::JobBuilder;

Job PendingJob(const JobSpec& spec) {
  Job job;
  job.spec = spec;
  return job;
}

Job RunningJob(const JobSpec& spec, Instant start) {
  Job job = PendingJob(spec);
  job.state = JobState::kRunning;
  job.start_time = start;
  return job;
}

TEST(RuntimePredictionTest, WithoutHistoryThePredictionIsTheRunLimit) {
  RuntimeHistory history;
  const RuntimePredictor predictor(history, 2);
  EXPECT_EQ(predictor.Predict(PendingJob(JobBuilder(1).Limit(3600))), 3600);
  EXPECT_EQ(predictor.Predict(PendingJob(JobBuilder(2))), kInfinite);  // no limit either
}

TEST(RuntimePredictionTest, MeanOfTheUsersLastRunsCappedAtTheRunLimit) {
  RuntimeHistory history;
  history.Record("ann", 100);
  history.Record("ann", 300);
  history.Record("bob", 5000);
  const RuntimePredictor two(history, 2);
  EXPECT_EQ(two.Predict(PendingJob(JobBuilder(1).User("ann").Limit(3600))), 200);
  EXPECT_EQ(two.Predict(PendingJob(JobBuilder(2).User("bob").Limit(3600))), 3600);  // capped
  EXPECT_EQ(two.Predict(PendingJob(JobBuilder(3).User("bob"))), 5000);  // no limit: no cap
  EXPECT_EQ(two.Predict(PendingJob(JobBuilder(4).User("cy").Limit(60))), 60);
  const RuntimePredictor one(history, 1);
  EXPECT_EQ(one.Predict(PendingJob(JobBuilder(1).User("ann").Limit(3600))), 300);
}

TEST(RuntimePredictionTest, RunningJobIsCorrectedWhenItOutlivesItsPrediction) {
  RuntimeHistory history;
  history.Record("ann", 100);
  const RuntimePredictor predictor(history, 2);
  const Job job = RunningJob(JobBuilder(1).User("ann").Limit(1000), 50);
  EXPECT_EQ(predictor.PredictedEnd(job, 60), 150);  // 50 + 100
  EXPECT_EQ(predictor.PredictedEnd(job, 149), 150);
  EXPECT_EQ(predictor.PredictedEnd(job, 150), 1050);  // outlived: 50 + run limit
  EXPECT_EQ(predictor.PredictedEnd(job, 1049), 1050);
  EXPECT_EQ(predictor.PredictedEnd(job, 1050), 1050);  // outlived its limit too: due now
  EXPECT_EQ(predictor.PredictedEnd(job, 2000), 2000);
  const Job unlimited = RunningJob(JobBuilder(2).User("ann"), 50);
  EXPECT_EQ(predictor.PredictedEnd(unlimited, 60), 150);
  EXPECT_EQ(predictor.PredictedEnd(unlimited, 200), kInfinite);  // no bound left
}

TEST(RuntimePredictionTest, PredictionsFollowTheStatesHistory) {
  ClusterState state = testing::ClusterBuilder().Hosts(2, 1).State();
  testing::SubmitRunning(state, JobBuilder(1).User("ann").Tasks(1).Limit(900), 0);
  testing::Submit(state, JobBuilder(2).User("ann").Tasks(1).Limit(900).Submit(10));
  const RuntimePredictor predictor(state.runtime_history(), 2);
  EXPECT_EQ(predictor.Predict(*state.FindJob(2)), 900);
  ASSERT_TRUE(Apply(JobFinished{.job = 1}, 120, state).ok());
  EXPECT_EQ(predictor.Predict(*state.FindJob(2)), 120);
}

}  // namespace
}  // namespace sluice::core
