// One cycle per test under predictive_backfill on interchangeable slots (issue 20): the
// candidate order, the head's protection on run limits, and protected waiters, each worked
// out by hand in the test's comment.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Started;
using testing::Submit;
using testing::SubmitRunning;

ClusterState Cluster(int32_t hosts, PredictiveKnobs knobs = {}) {
  QueueSpec queue{.name = "normal", .policy = PolicyKind::kPredictiveBackfill};
  queue.predictive = knobs;
  return ClusterBuilder().Hosts(hosts, 1).Queue(queue).State();
}

// Gives `user` the history `runtimes` (jobs 101, 102, ... run one after another on one slot,
// ending by t=400).
void History(ClusterState& state, const std::string& user, std::vector<Duration> runtimes,
             JobId first_id) {
  Instant t = 0;
  for (Duration runtime : runtimes) {
    SubmitRunning(state, JobBuilder(first_id).User(user).Tasks(1).Limit(1000), t);
    ASSERT_TRUE(Apply(JobFinished{.job = first_id}, t + runtime, state).ok());
    t += runtime;
    ++first_id;
  }
}

// 10 slots at t=410: job 1 runs on 6 until t=500. Head 2 needs 8: S = 500,
// extra = 4 + 6 - 8 = 2. Jobs 3 (user "long", predicted 400 s) and 4 (user "short",
// predicted 20 s) each ask 2 slots with a run limit of 500 s: neither ends by S, so only one
// fits in `extra`.
ClusterState TwoCandidates(PredictiveKnobs knobs) {
  ClusterState state = Cluster(10, knobs);
  History(state, "long", {400}, 101);
  History(state, "short", {10, 30}, 201);
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(90), 410);
  Submit(state, JobBuilder(2).Tasks(8).Limit(50).Submit(405));
  Submit(state, JobBuilder(3).User("long").Tasks(2).Limit(500).Submit(406));
  Submit(state, JobBuilder(4).User("short").Tasks(2).Limit(500).Submit(407));
  return state;
}

TEST(PredictiveCycleTest, ShortestPredictedCandidateTakesTheExtraSlots) {
  ClusterState state = TwoCandidates(PredictiveKnobs{.order = BackfillOrder::kShortest});
  CycleResult result = testing::ExplainedCycle(state, 410);
  EXPECT_EQ(Started(result), (std::vector<JobId>{4}));  // predicted 20 s < 400 s
  ASSERT_TRUE(ReasonsOf(result, 3).has_value());
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kReserved);
  EXPECT_EQ(ReasonsOf(result, 3)->details[0].job, 2);
  EXPECT_EQ(ReasonsOf(result, 3)->details[0].time, 500);
  EXPECT_EQ(ReasonsOf(result, 2)->main, ReasonCode::kNoResource);
}

// Gives `user` finished runs of (runtime, run limit), one after another from t=0 on one slot.
void HistoryWithLimits(ClusterState& state, const std::string& user,
                       std::vector<std::pair<Duration, Duration>> runs, JobId first_id) {
  Instant t = 0;
  for (const auto& [runtime, limit] : runs) {
    SubmitRunning(state, JobBuilder(first_id).User(user).Tasks(1).Limit(limit), t);
    ASSERT_TRUE(Apply(JobFinished{.job = first_id}, t + runtime, state).ok());
    t += runtime;
    ++first_id;
  }
}

// The default knobs (session 9): history_match user_limit, order expansion. The cluster of
// TwoCandidates at t=410 (S = 500, extra = 2), with job 3 of user "a" and job 4 of user "b",
// both 2 slots with a run limit of 500 s. "a" ran 30 s with limit 500, then 300 s with limit
// 1000; "b" ran 100 s twice with limit 1000.
//   user_limit: p3 = 30 (a's runs with limit 500), p4 = 100 (b has none with 500: all runs);
//     x3 = (4 + 30) / 30 = 1.13 > x4 = (3 + 100) / 100 = 1.03: job 3 takes the extra slots.
//   user:       p3 = ceil((30 + 300) / 2) = 165, x3 = 169 / 165 = 1.024 < x4 = 1.03: job 4.
ClusterState SameLimitHistory(PredictiveKnobs knobs) {
  ClusterState state = Cluster(10, knobs);
  HistoryWithLimits(state, "a", {{30, 500}, {300, 1000}}, 101);
  HistoryWithLimits(state, "b", {{100, 1000}, {100, 1000}}, 201);
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(90), 410);
  Submit(state, JobBuilder(2).Tasks(8).Limit(50).Submit(405));
  Submit(state, JobBuilder(3).User("a").Tasks(2).Limit(500).Submit(406));
  Submit(state, JobBuilder(4).User("b").Tasks(2).Limit(500).Submit(407));
  return state;
}

TEST(PredictiveCycleTest, DefaultsPredictFromRunsWithTheSameRunLimit) {
  EXPECT_EQ(PredictiveKnobs{}.history_match, HistoryMatch::kUserLimit);
  EXPECT_EQ(PredictiveKnobs{}.order, BackfillOrder::kExpansion);
  CycleResult defaults = testing::ExplainedCycle(SameLimitHistory(PredictiveKnobs{}), 410);
  EXPECT_EQ(Started(defaults), (std::vector<JobId>{3}));
  EXPECT_EQ(ReasonsOf(defaults, 4)->main, ReasonCode::kReserved);
  CycleResult all_runs = testing::ExplainedCycle(
      SameLimitHistory(PredictiveKnobs{.history_match = HistoryMatch::kUser}), 410);
  EXPECT_EQ(Started(all_runs), (std::vector<JobId>{4}));
}

// One user, two run limits, consecutive in the queue: a cycle reuses a prediction only for
// the same user *and* run limit. User "a" ran 30 s with limit 500 and 300 s with limit 1000.
// Job 4 (limit 1000, submitted first) is predicted 300 s, x4 = (4 + 300) / 300 = 1.013;
// job 3 (limit 500) 30 s, x3 = (3 + 30) / 30 = 1.1: job 3 takes the extra slots. Were job 4's
// prediction reused for job 3, x3 = 303 / 300 = 1.010 < x4 and job 4 would start.
TEST(PredictiveCycleTest, SameUserOtherRunLimitIsPredictedOnItsOwn) {
  ClusterState state = Cluster(10);
  HistoryWithLimits(state, "a", {{30, 500}, {300, 1000}}, 101);
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(90), 410);
  Submit(state, JobBuilder(2).Tasks(8).Limit(50).Submit(405));
  Submit(state, JobBuilder(4).User("a").Tasks(2).Limit(1000).Submit(406));
  Submit(state, JobBuilder(3).User("a").Tasks(2).Limit(500).Submit(407));
  CycleResult result = testing::ExplainedCycle(state, 410);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  ASSERT_TRUE(ReasonsOf(result, 4).has_value());
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kReserved);
}

// The study's true runtimes are per job: two jobs of one user with one run limit (user
// "short", history 10 s and 30 s) that truly run 450 s (job 3) and 15 s (job 4) are not given
// one prediction. x3 = (4 + 450) / 450 = 1.009, x4 = (3 + 15) / 15 = 1.2: job 4 starts (with
// job 3's 450 s reused for it, x4 = 453 / 450 = 1.007 and job 3 would).
TEST(PredictiveCycleTest, TrueRuntimesArePerJobWithinAUsersBatch) {
  ClusterState state = Cluster(10);
  History(state, "short", {10, 30}, 201);
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(90), 410);
  Submit(state, JobBuilder(2).Tasks(8).Limit(50).Submit(405));
  Submit(state, JobBuilder(3).User("short").Tasks(2).Limit(500).Submit(406));
  Submit(state, JobBuilder(4).User("short").Tasks(2).Limit(500).Submit(407));
  state.runtime_history_for_study().SetTrueRuntime(3, 450);
  state.runtime_history_for_study().SetTrueRuntime(4, 15);
  CycleResult result = testing::ExplainedCycle(state, 410);
  EXPECT_EQ(Started(result), (std::vector<JobId>{4}));
}

// Defaults again, on TwoCandidates' jobs but with the head 2 submitted at t=5 and job 3 at
// t=6: at t=410 job 3 (predicted 400 s) has waited 404 s, x3 = (404 + 400) / 400 = 2.01,
// and job 4 (predicted 20 s) 3 s, x4 = (3 + 20) / 20 = 1.15. The expansion factor lets the
// long waiter take the extra slots; shortest-first would start job 4.
ClusterState LongWaiter(PredictiveKnobs knobs) {
  ClusterState state = Cluster(10, knobs);
  History(state, "long", {400}, 101);
  History(state, "short", {10, 30}, 201);
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(90), 410);
  Submit(state, JobBuilder(2).Tasks(8).Limit(50).Submit(5));
  Submit(state, JobBuilder(3).User("long").Tasks(2).Limit(500).Submit(6));
  Submit(state, JobBuilder(4).User("short").Tasks(2).Limit(500).Submit(407));
  return state;
}

TEST(PredictiveCycleTest, DefaultOrderLetsTheLongestExpandedWaiterGoFirst) {
  CycleResult defaults = testing::ExplainedCycle(LongWaiter(PredictiveKnobs{}), 410);
  EXPECT_EQ(Started(defaults), (std::vector<JobId>{3}));
  ASSERT_TRUE(ReasonsOf(defaults, 4).has_value());
  EXPECT_EQ(ReasonsOf(defaults, 4)->main, ReasonCode::kReserved);
  EXPECT_EQ(ReasonsOf(defaults, 4)->details[0].job, 2);
  EXPECT_EQ(ReasonsOf(defaults, 4)->details[0].time, 500);
  CycleResult shortest =
      testing::ExplainedCycle(LongWaiter(PredictiveKnobs{.order = BackfillOrder::kShortest}), 410);
  EXPECT_EQ(Started(shortest), (std::vector<JobId>{4}));
}

TEST(PredictiveCycleTest, TrueRuntimesOfTheStudyOrderTheCandidates) {
  // The study's oracle (sluice sim --oracle-runtimes): job 3 truly runs 15 s and job 4
  // 450 s, so job 3 takes the extra slots although its user's history says 400 s.
  ClusterState state = TwoCandidates(PredictiveKnobs{});
  state.runtime_history_for_study().SetTrueRuntime(3, 15);
  state.runtime_history_for_study().SetTrueRuntime(4, 450);
  CycleResult result = testing::ExplainedCycle(state, 410);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kReserved);
}

TEST(PredictiveCycleTest, QueueOrderDecidesAsEasyBackfill) {
  ClusterState state = TwoCandidates(PredictiveKnobs{.order = BackfillOrder::kQueue});
  CycleResult result = testing::ExplainedCycle(state, 410);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kReserved);
}

TEST(PredictiveCycleTest, AShortPredictionNeverLetsAJobDelayTheHead) {
  // Job 4 is predicted to end at 410 + 20 = 430 <= S = 500, but its run limit ends it at
  // 910 > S and it asks 3 slots > extra 2: the head's reservation from run limits wins, and
  // it waits as RESERVED for job 2 from t=500. Job 5 (predicted 90 s, tried after job 4)
  // ends by its run limit at 500 <= S and starts.
  ClusterState state = Cluster(10);
  History(state, "short", {10, 30}, 201);
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(90), 410);
  Submit(state, JobBuilder(2).Tasks(8).Limit(50).Submit(405));
  Submit(state, JobBuilder(4).User("short").Tasks(3).Limit(500).Submit(407));
  Submit(state, JobBuilder(5).Tasks(4).Limit(90).Submit(408));
  CycleResult result = testing::ExplainedCycle(state, 410);
  EXPECT_EQ(Started(result), (std::vector<JobId>{5}));
  ASSERT_TRUE(ReasonsOf(result, 4).has_value());
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kReserved);
  EXPECT_EQ(ReasonsOf(result, 4)->details[0].job, 2);
  EXPECT_EQ(ReasonsOf(result, 4)->details[0].time, 500);
}

// 10 slots at t=50: job 1 runs on 6 until t=100, job 9 on 2 until t=300; 2 free. Head 2
// needs 10: S_h = 300, extra_h = 0. Job 3 needs 8 and has waited 50 s: with reserve_after
// = 40 it is a protected waiter, S_w = 100 (2 + 6 = 8 free), extra_w = 0. Job 4 asks 2 slots
// for 200 s: it ends at 250 <= S_h, so the head alone would let it start, but 250 > S_w and
// 2 > extra_w: it would delay job 3.
ClusterState WithWaiter(PredictiveKnobs knobs) {
  ClusterState state = Cluster(10, knobs);
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(100), 0);
  SubmitRunning(state, JobBuilder(9).Tasks(2).Limit(300), 0);
  Submit(state, JobBuilder(2).Tasks(10).Limit(50).Submit(0));
  Submit(state, JobBuilder(3).Tasks(8).Limit(50).Submit(0));
  Submit(state, JobBuilder(4).Tasks(2).Limit(200).Submit(20));
  return state;
}

TEST(PredictiveCycleTest, ProtectedWaiterKeepsItsOwnReservation) {
  CycleResult result = testing::ExplainedCycle(
      WithWaiter(PredictiveKnobs{.reserve_after = 40, .reserve_depth = 1}), 50);
  EXPECT_TRUE(Started(result).empty());
  ASSERT_TRUE(ReasonsOf(result, 4).has_value());
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kReserved);
  EXPECT_EQ(ReasonsOf(result, 4)->details[0].job, 3);  // names the waiter, not the head
  EXPECT_EQ(ReasonsOf(result, 4)->details[0].time, 100);
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kNoResource);
}

TEST(PredictiveCycleTest, WaiterProtectionOnlyPastTheBound) {
  // Job 3 has waited 50 s < 60 s: only the head is protected, and job 4 starts.
  CycleResult result = testing::ExplainedCycle(
      WithWaiter(PredictiveKnobs{.reserve_after = 60, .reserve_depth = 1}), 50);
  EXPECT_EQ(Started(result), (std::vector<JobId>{4}));
  CycleResult off = testing::ExplainedCycle(WithWaiter(PredictiveKnobs{}), 50);
  EXPECT_EQ(Started(off), (std::vector<JobId>{4}));
}

// 10 slots at t=410: job 1 of user "short" (last runs 10 s and 30 s: predicted 20 s) runs
// on 6 with a run limit of 1000 s. Head 2 needs 8. From run limits: S = 1410,
// extra = 4 + 6 - 8 = 2. From predictions: S_p = 410 + 20 = 430, extra_p = 2. Job 4 (user
// "short", 1 slot, predicted end 430 <= S_p, run-limit end 910 <= S) starts under both
// guards. Job 3 (user "long", predicted 400 s) asks 3 slots for at most 500 s: it ends by S
// (910 <= 1410), so the run-limit guard lets it start, but it is predicted to end at
// 810 > S_p and 3 > extra_p: the predicted guard keeps it for the head.
ClusterState PredictedShadow(PredictiveKnobs knobs) {
  ClusterState state = Cluster(10, knobs);
  History(state, "long", {400}, 101);
  History(state, "short", {10, 30}, 201);
  SubmitRunning(state, JobBuilder(1).User("short").Tasks(6).Limit(1000), 410);
  Submit(state, JobBuilder(2).Tasks(8).Limit(50).Submit(405));
  Submit(state, JobBuilder(3).User("long").Tasks(3).Limit(500).Submit(406));
  Submit(state, JobBuilder(4).User("short").Tasks(1).Limit(500).Submit(407));
  return state;
}

TEST(PredictiveCycleTest, PredictedGuardKeepsSlotsTheHeadIsExpectedToNeed) {
  CycleResult result =
      testing::ExplainedCycle(PredictedShadow(PredictiveKnobs{.predicted_guard = true}), 410);
  EXPECT_EQ(Started(result), (std::vector<JobId>{4}));
  ASSERT_TRUE(ReasonsOf(result, 3).has_value());
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kReserved);
  EXPECT_EQ(ReasonsOf(result, 3)->details[0].job, 2);
  EXPECT_EQ(ReasonsOf(result, 3)->details[0].time, 430);  // the predicted reservation
}

TEST(PredictiveCycleTest, WithoutPredictedGuardOnlyRunLimitsProtectTheHead) {
  CycleResult result =
      testing::ExplainedCycle(PredictedShadow(PredictiveKnobs{.predicted_guard = false}), 410);
  EXPECT_EQ(Started(result), (std::vector<JobId>{4, 3}));
}

// reserve_top (joint reservations of the first K jobs, head_protection.h guard 3), on the
// WithWaiter cluster: free 2 on [50, 100), 8 on [100, 300), 10 from 300. Head 2 (10 slots,
// 50 s) is placed at 300; job 3 (8 slots, 50 s) at the earliest fit after it: [100, 150).
// Job 4 (2 slots until 250 <= S_h) would leave job 3 only 6 slots at 100: it waits, RESERVED
// for job 3 from t=100, although the head alone (reserve_top = 1) lets it start.
TEST(PredictiveCycleTest, JointReservationsProtectTheFirstJobsOfTheQueue) {
  CycleResult result = testing::ExplainedCycle(WithWaiter(PredictiveKnobs{.reserve_top = 2}), 50);
  EXPECT_TRUE(Started(result).empty());
  ASSERT_TRUE(ReasonsOf(result, 4).has_value());
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kReserved);
  EXPECT_EQ(ReasonsOf(result, 4)->details[0].job, 3);
  EXPECT_EQ(ReasonsOf(result, 4)->details[0].time, 100);
  CycleResult head_only =
      testing::ExplainedCycle(WithWaiter(PredictiveKnobs{.reserve_top = 1}), 50);
  EXPECT_EQ(Started(head_only), (std::vector<JobId>{4}));
}

// The same cluster; job 3 now asks 2 slots for 40 s: its joint reservation is [50, 90), now.
// Job 4 (1 slot, 30 s, submitted later) is tried first (order shortest; the default order,
// expansion, would try job 3 first: x3 = 90 / 40 > x4 = 60 / 30), but the 2 free slots are
// job 3's until 90: RESERVED for job 3 from t=50. Job 3 then starts in its own reservation.
// With the head only protected, job 4 takes a slot first and job 3 no longer fits.
ClusterState NarrowSecond(PredictiveKnobs knobs) {
  ClusterState state = Cluster(10, knobs);
  SubmitRunning(state, JobBuilder(1).Tasks(6).Limit(100), 0);
  SubmitRunning(state, JobBuilder(9).Tasks(2).Limit(300), 0);
  Submit(state, JobBuilder(2).Tasks(10).Limit(50).Submit(0));
  Submit(state, JobBuilder(3).Tasks(2).Limit(40).Submit(0));
  Submit(state, JobBuilder(4).Tasks(1).Limit(30).Submit(20));
  return state;
}

TEST(PredictiveCycleTest, AJobAmongTheFirstStartsInItsOwnJointReservation) {
  CycleResult result = testing::ExplainedCycle(
      NarrowSecond(PredictiveKnobs{.order = BackfillOrder::kShortest, .reserve_top = 3}), 50);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  ASSERT_TRUE(ReasonsOf(result, 4).has_value());
  EXPECT_EQ(ReasonsOf(result, 4)->main, ReasonCode::kReserved);
  EXPECT_EQ(ReasonsOf(result, 4)->details[0].job, 3);
  EXPECT_EQ(ReasonsOf(result, 4)->details[0].time, 50);
  CycleResult head_only =
      testing::ExplainedCycle(NarrowSecond(PredictiveKnobs{.order = BackfillOrder::kShortest}), 50);
  EXPECT_EQ(Started(head_only), (std::vector<JobId>{4}));
}

}  // namespace
}  // namespace sluice::core
