// Eligibility (R-Q-1, R-Q-3): holds, dependencies, begin times and dispatch windows keep a
// job from being tried, with their reasons and timers; closed queues refuse submissions.
#include "core/admission/eligibility.h"

#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::CycleAndCommit;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Started;
using testing::Submit;

constexpr Instant kHour = 3600;

void Finish(ClusterState& state, JobId id, Instant t, int32_t exit_code = 0) {
  ASSERT_TRUE(Apply(JobFinished{.job = id, .exit_code = exit_code}, t, state).ok());
}

PendingReasons MustPend(const CycleResult& result, JobId id) {
  std::optional<PendingReasons> reasons = ReasonsOf(result, id);
  EXPECT_TRUE(reasons.has_value()) << "job " << id << " has no reasons";
  return reasons.value_or(PendingReasons{});
}

// --- Dependencies ----------------------------------------------------------------------------

TEST(EligibilityTest, ADependencyWaitsUntilTheNamedJobIsDone) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).State();
  Submit(state, JobBuilder(1));
  Submit(state, JobBuilder(2).Depend("done(1)"));
  CycleResult first = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(first), (std::vector<JobId>{1}));
  PendingReasons why = MustPend(first, 2);
  EXPECT_EQ(why.main, ReasonCode::kDependency);
  EXPECT_EQ(why.details[0].condition, "done(1)");
  EXPECT_FALSE(why.details[0].never);
  Finish(state, 1, 10);
  EXPECT_EQ(Started(CycleAndCommit(state, 10)), (std::vector<JobId>{2}));
}

TEST(EligibilityTest, ADependencyThatCanNeverBeSatisfiedSaysSoAndTheJobStaysPending) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).State();
  Submit(state, JobBuilder(7));
  Submit(state, JobBuilder(8).Depend("done(7) && started(7)"));
  CycleAndCommit(state, 0);
  Finish(state, 7, 5, /*exit_code=*/1);  // EXIT: done(7) never holds
  CycleResult result = CycleAndCommit(state, 5);
  EXPECT_TRUE(Started(result).empty());
  PendingReasons why = MustPend(result, 8);
  EXPECT_EQ(why.main, ReasonCode::kDependency);
  EXPECT_EQ(why.details[0].condition, "done(7)");
  EXPECT_TRUE(why.details[0].never);
  EXPECT_EQ(state.FindJob(8)->state, JobState::kPending);
}

TEST(EligibilityTest, ACancelledJobSatisfiesExitAndEnded) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1).Hold());
  Submit(state, JobBuilder(2).Depend("exit(1) && ended(1) && !started(1)"));
  ASSERT_TRUE(Apply(JobCancelled{1}, 3, state).ok());
  EXPECT_EQ(Started(CycleAndCommit(state, 3)), (std::vector<JobId>{2}));
}

TEST(EligibilityTest, AJobWaitingOnADependencyIsNotAHead) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1).Hold());
  Submit(state, JobBuilder(2).Depend("done(1)"));
  Submit(state, JobBuilder(3));
  EXPECT_EQ(Started(CycleAndCommit(state, 0)), (std::vector<JobId>{3}));
}

TEST(EligibilityTest, TheVerdictIsKeptAndChangesOnlyWithTheNamedJobs) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1));
  Submit(state, JobBuilder(2).Depend("started(1)"));
  ASSERT_NE(state.dependencies().Of(2), nullptr);
  EXPECT_EQ(state.dependencies().Of(2)->verdict, DependVerdict::kWaiting);
  EXPECT_EQ(state.dependencies().Of(1), nullptr);
  CycleAndCommit(state, 0);  // starts 1
  EXPECT_EQ(state.dependencies().Of(2)->verdict, DependVerdict::kSatisfied);
}

TEST(EligibilityTest, SubmissionRejectsBadAndUnknownDependencies) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1));
  Status bad = Apply(JobSubmitted{JobBuilder(2).Depend("done(1) &")}, 0, state);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "job 2: depend: column 9: expected &&, || or the end, got '&'");
  Status unknown = Apply(JobSubmitted{JobBuilder(3).Depend("done(1) || done(12)")}, 0, state);
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_EQ(unknown.message(), "job 3: depend: no job 12");
  EXPECT_EQ(state.FindJob(2), nullptr);
  EXPECT_EQ(state.FindJob(3), nullptr);
}

TEST(EligibilityTest, AJobRestoredAfterItsDependentsIsSeenByThem) {
  // Restore (the store's replay) submits without Apply's checks, in any order.
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  ASSERT_TRUE(state.Submit(JobBuilder(2).Depend("done(1)")).ok());
  EXPECT_EQ(state.dependencies().Of(2)->verdict, DependVerdict::kNever);  // 1 is not known yet
  ASSERT_TRUE(state.Submit(JobBuilder(1)).ok());
  EXPECT_EQ(state.dependencies().Of(2)->verdict, DependVerdict::kWaiting);
}

// --- Hold and release ------------------------------------------------------------------------

TEST(EligibilityTest, AHeldJobIsSkippedAndReleasedAtItsOriginalPlace) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1));
  Submit(state, JobBuilder(2));
  ASSERT_TRUE(Apply(JobHeld{1}, 0, state).ok());
  CycleResult held = testing::ExplainedCycle(state, 0);
  EXPECT_EQ(Started(held), (std::vector<JobId>{2}));
  EXPECT_EQ(MustPend(held, 1).main, ReasonCode::kHeld);
  ASSERT_TRUE(Apply(JobReleased{1}, 1, state).ok());
  EXPECT_EQ(Started(testing::ExplainedCycle(state, 1)), (std::vector<JobId>{1}));  // ahead of 2
  EXPECT_EQ(Apply(JobReleased{1}, 1, state).code(), StatusCode::kFailedPrecondition);
}

TEST(EligibilityTest, HeldOutranksADependencyButBothAreReported) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1).Hold());
  JobSpec spec = JobBuilder(2).Depend("done(1)");
  spec.hold = true;
  Submit(state, spec);
  PendingReasons why = MustPend(testing::ExplainedCycle(state, 0), 2);
  EXPECT_EQ(why.main, ReasonCode::kHeld);
  ASSERT_EQ(why.details.size(), 2u);
  EXPECT_EQ(why.details[1].code, ReasonCode::kDependency);
}

// --- Queue status ----------------------------------------------------------------------------

TEST(EligibilityTest, AClosedQueueRefusesSubmissionsAndDrainingDispatches) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1));
  ASSERT_TRUE(Apply(QueueChanged{.queue = "normal", .open = false}, 0, state).ok());
  Status refused = Apply(JobSubmitted{JobBuilder(2)}, 0, state);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(), "job 2: queue 'normal' is closed to new jobs");
  EXPECT_EQ(Started(CycleAndCommit(state, 0)), (std::vector<JobId>{1}));  // draining
  ASSERT_TRUE(Apply(QueueChanged{.queue = "normal", .open = true}, 1, state).ok());
  EXPECT_TRUE(Apply(JobSubmitted{JobBuilder(2)}, 1, state).ok());
  EXPECT_EQ(Apply(QueueChanged{.queue = "nope", .active = false}, 1, state).code(),
            StatusCode::kNotFound);
}

TEST(EligibilityTest, AnInactivatedQueueStopsDispatching) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1));
  ASSERT_TRUE(Apply(QueueChanged{.queue = "normal", .active = false}, 0, state).ok());
  CycleResult result = testing::ExplainedCycle(state, 0);
  EXPECT_TRUE(Started(result).empty());
  EXPECT_EQ(MustPend(result, 1).main, ReasonCode::kQueueInactive);
}

// --- Dispatch windows ------------------------------------------------------------------------

ClusterState NightQueue(Instant epoch_offset) {
  ClusterConfig config = ClusterBuilder().Hosts(1, 1).Config();
  config.queues[0].windows = {"19:00-07:00"};
  config.epoch_offset = epoch_offset;
  Result<ClusterState> state = ClusterState::Create(config);
  SLUICE_CHECK(state.has_value());
  return std::move(state).value();
}

TEST(EligibilityTest, AClosedWindowHoldsTheQueueAndWakesAtTheOpening) {
  ClusterState state = NightQueue(0);
  Submit(state, JobBuilder(1).Submit(12 * kHour));
  CycleResult noon = testing::ExplainedCycle(state, 12 * kHour);
  EXPECT_TRUE(Started(noon).empty());
  PendingReasons why = MustPend(noon, 1);
  EXPECT_EQ(why.main, ReasonCode::kQueueWindow);
  EXPECT_EQ(why.details[0].time, 19 * kHour);
  EXPECT_EQ(noon.wake_at, 19 * kHour);
  EXPECT_EQ(Started(testing::ExplainedCycle(state, 19 * kHour)), (std::vector<JobId>{1}));
}

TEST(EligibilityTest, TheEpochOffsetMapsCoreTimeToWallTime) {
  // Core time 0 is 18:00 UTC: the window opens an hour later, at core time 3600.
  ClusterState state = NightQueue(18 * kHour);
  Submit(state, JobBuilder(1));
  CycleResult result = testing::ExplainedCycle(state, 0);
  EXPECT_EQ(MustPend(result, 1).details[0].time, kHour);
  EXPECT_EQ(result.wake_at, kHour);
}

TEST(EligibilityTest, AWindowAsksNoTimerForJobsThatWaitOnEvents) {
  ClusterState state = NightQueue(0);
  Submit(state, JobBuilder(1).Hold().Submit(12 * kHour));
  EXPECT_EQ(testing::ExplainedCycle(state, 12 * kHour).wake_at, std::nullopt);
  EXPECT_EQ(NextEligibilityTimer(state, 12 * kHour), std::nullopt);
}

TEST(EligibilityTest, IsEligibleAgreesWithCheckEligibility) {
  ClusterState state = NightQueue(0);
  Submit(state, JobBuilder(1));
  Submit(state, JobBuilder(2).Hold());
  for (Instant t : {Instant{0}, 12 * kHour}) {
    for (JobId id : {1, 2}) {
      const Job& job = *state.FindJob(id);
      EXPECT_EQ(IsEligible(job, state, t), !CheckEligibility(job, state, t).has_value());
    }
  }
}

TEST(EligibilityTest, BadWindowsInACodeBuiltConfigAreRefused) {
  ClusterConfig config = ClusterBuilder().Hosts(1, 1).Config();
  config.queues[0].windows = {"7-19"};
  Result<ClusterState> state = ClusterState::Create(config);
  ASSERT_FALSE(state.has_value());
  EXPECT_EQ(state.error().message().rfind("queue 'normal': windows: '7-19' is not a window", 0),
            0u);
}

}  // namespace
}  // namespace sluice::core
