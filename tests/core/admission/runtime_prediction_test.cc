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

TEST(RuntimePredictionTest, UserLimitMatchPrefersTheUsersRunsWithTheSameLimit) {
  RuntimeHistory history;
  history.Record("ann", 100, 3600);
  history.Record("ann", 300, 3600);
  history.Record("ann", 5000, 7200);
  const RuntimePredictor by_limit(history, 2, HistoryMatch::kUserLimit);
  EXPECT_EQ(by_limit.Predict(PendingJob(JobBuilder(1).User("ann").Limit(3600))), 200);
  EXPECT_EQ(by_limit.Predict(PendingJob(JobBuilder(2).User("ann").Limit(7200))), 5000);
  // No run of ann with a 600 s limit: ann's last two (300, 5000) -> 2650, capped at 600.
  EXPECT_EQ(by_limit.Predict(PendingJob(JobBuilder(3).User("ann").Limit(600))), 600);
  EXPECT_EQ(by_limit.Predict(PendingJob(JobBuilder(4).User("ann").Limit(9000))), 2650);
  EXPECT_EQ(by_limit.Predict(PendingJob(JobBuilder(5).User("ann"))), 2650);  // no limit
  EXPECT_EQ(by_limit.Predict(PendingJob(JobBuilder(6).User("bob").Limit(60))), 60);
  const RuntimePredictor by_user(history, 2);  // the default: ann's last two
  EXPECT_EQ(by_user.Predict(PendingJob(JobBuilder(1).User("ann").Limit(3600))), 2650);
  PredictiveKnobs knobs;
  knobs.history_runs = 1;
  knobs.history_match = HistoryMatch::kUserLimit;
  EXPECT_EQ(
      RuntimePredictor(history, knobs).Predict(PendingJob(JobBuilder(1).User("ann").Limit(3600))),
      300);
}

TEST(RuntimePredictionTest, TrueRuntimesReplaceTheHistoryCappedAtTheRunLimit) {
  // The study's perfect predictions (sluice sim --oracle-runtimes).
  RuntimeHistory history;
  history.Record("ann", 100);
  history.SetTrueRuntime(1, 700);
  history.SetTrueRuntime(2, 5000);
  const RuntimePredictor predictor(history, 2);
  EXPECT_EQ(predictor.Predict(PendingJob(JobBuilder(1).User("ann").Limit(3600))), 700);
  EXPECT_EQ(predictor.Predict(PendingJob(JobBuilder(2).User("ann").Limit(3600))), 3600);
  EXPECT_EQ(predictor.Predict(PendingJob(JobBuilder(3).User("ann").Limit(3600))), 100);
  const Job running = RunningJob(JobBuilder(1).User("ann").Limit(3600), 50);
  EXPECT_EQ(predictor.PredictedEnd(running, 60), 750);
}

TEST(RuntimePredictionTest, PredictionsFollowTheStatesHistory) {
  ClusterState state = testing::ClusterBuilder().Hosts(2, 1).State();
  testing::SubmitRunning(state, JobBuilder(1).User("ann").Tasks(1).Limit(900), 0);
  testing::Submit(state, JobBuilder(2).User("ann").Tasks(1).Limit(900).Submit(10));
  const RuntimePredictor predictor(state.usage().runtimes(), 2);
  EXPECT_EQ(predictor.Predict(*state.FindJob(2)), 900);
  ASSERT_TRUE(Apply(JobFinished{.job = 1}, 120, state).ok());
  EXPECT_EQ(predictor.Predict(*state.FindJob(2)), 120);
}

// R-RSV-2: the drivers end a job inside an advance reservation when the window it started in
// ends + the overrun, so the forecast must not expect it later (nor never, without a limit).
TEST(RuntimePredictionTest, TheForecastEndsAJobInsideAReservationWithItsWindow) {
  for (PolicyKind policy : {PolicyKind::kFifo, PolicyKind::kPredictiveBackfill}) {
    SCOPED_TRACE(ToString(policy));
    ClusterState state = testing::ClusterBuilder().Hosts(4, 1).Policy(policy).State();
    ASSERT_TRUE(Apply(ReservationsChanged{{AdvanceReservationSpec{.name = "course",
                                                                  .hosts = {"h1", "h2", "h3"},
                                                                  .windows = {{100, 200}},
                                                                  .users = {"ann"},
                                                                  .overrun = 30}}},
                      0, state)
                    .ok());
    testing::SubmitRunning(state, JobBuilder(1).User("ann").Reservation("course").Limit(500), 100);
    testing::SubmitRunning(state, JobBuilder(2).User("ann").Reservation("course"), 110);
    testing::SubmitRunning(state, JobBuilder(3).User("ann").Reservation("course").Limit(50), 120);
    testing::SubmitRunning(state, JobBuilder(4).Limit(500), 0);  // outside: its limit
    auto end_of = [&](JobId id, Instant now) {
      return ExpectedEndForForecast(state, *state.FindJob(id), now);
    };
    EXPECT_EQ(end_of(1, 150).end, 230);  // 100 + 500 capped at 200 + 30
    EXPECT_FALSE(end_of(1, 150).predicted);
    EXPECT_EQ(end_of(2, 150).end, 230);  // no limit: the window still ends it
    EXPECT_EQ(end_of(3, 150).end, 170);  // its limit comes first
    EXPECT_EQ(end_of(1, 260).end, 260);  // overdue (its end not reported yet): due now
    EXPECT_EQ(end_of(4, 150).end, 500);
  }
}

}  // namespace
}  // namespace sluice::core
