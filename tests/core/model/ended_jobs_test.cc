// Ended jobs outside the job table (ClusterState::NoteEnded, Forget): a dependency keeps the
// verdict the named job's end gave, after a restart (the server restores only jobs that had
// not ended) and after the server's retention dropped the job.
#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::CycleAndCommit;
using testing::JobBuilder;
using testing::Started;
using testing::Submit;

TEST(EndedJobsTest, AForgottenJobKeepsItsOutcomeForDependencies) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1));
  Submit(state, JobBuilder(2));
  EXPECT_EQ(Started(CycleAndCommit(state, 0)), (std::vector<JobId>{1}));
  EXPECT_EQ(state.Forget(1).code(), StatusCode::kFailedPrecondition);  // still running
  ASSERT_TRUE(Apply(JobFinished{.job = 1, .exit_code = 0}, 5, state).ok());
  ASSERT_TRUE(Apply(JobCancelled{2}, 5, state).ok());
  ASSERT_TRUE(state.Forget(1).ok());
  ASSERT_TRUE(state.Forget(2).ok());
  EXPECT_EQ(state.FindJob(1), nullptr);
  EXPECT_EQ(state.Forget(1).code(), StatusCode::kNotFound);
  EXPECT_EQ(state.dependencies().ended_count(), 2);

  // New submissions may still name them, and see how they ended.
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(3).Depend("done(1) && started(1)")}, 6, state).ok());
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(4).Depend("exit(1)")}, 6, state).ok());
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(5).Depend("exit(2) && !started(2)")}, 6, state).ok());
  EXPECT_EQ(state.dependencies().Of(3)->verdict, DependVerdict::kSatisfied);
  EXPECT_EQ(state.dependencies().Of(4)->verdict, DependVerdict::kNever);
  EXPECT_EQ(state.dependencies().Of(5)->verdict, DependVerdict::kSatisfied);
  EXPECT_EQ(Apply(JobSubmitted{JobBuilder(6).Depend("done(9)")}, 6, state).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(Started(CycleAndCommit(state, 6)), (std::vector<JobId>{3}));
  // An ended id is not taken again (its dependents would follow the new job).
  EXPECT_EQ(state.Submit(JobBuilder(1)).code(), StatusCode::kAlreadyExists);
}

TEST(EndedJobsTest, AJobThatEndedBeforeARestartSatisfiesItsRestoredDependents) {
  // The store's replay: the waiting dependent is restored, the ended job only noted.
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  ASSERT_TRUE(state.Submit(JobBuilder(8).Depend("done(7)")).ok());
  EXPECT_EQ(state.dependencies().Of(8)->verdict, DependVerdict::kNever);  // 7 is not known yet
  ASSERT_TRUE(state.NoteEnded(7, JobState::kDone, /*started=*/true).ok());
  EXPECT_EQ(state.dependencies().Of(8)->verdict, DependVerdict::kSatisfied);
  EXPECT_EQ(Started(CycleAndCommit(state, 0)), (std::vector<JobId>{8}));

  EXPECT_EQ(state.NoteEnded(9, JobState::kRunning, true).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(state.NoteEnded(8, JobState::kDone, true).code(), StatusCode::kAlreadyExists);
}

TEST(EndedJobsTest, AWithdrawnJobIsAsIfNeverSubmitted) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  Submit(state, JobBuilder(1));
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(2).Depend("done(1)")}, 0, state).ok());
  ASSERT_TRUE(state.Withdraw(2).ok());
  ASSERT_TRUE(state.Withdraw(1).ok());
  EXPECT_FALSE(state.Knows(1));
  EXPECT_FALSE(state.Knows(2));
  EXPECT_EQ(state.Withdraw(1).code(), StatusCode::kNotFound);
  EXPECT_EQ(Apply(JobSubmitted{JobBuilder(3).Depend("ended(1)")}, 0, state).code(),
            StatusCode::kNotFound);
  Submit(state, JobBuilder(4));
  EXPECT_EQ(Started(CycleAndCommit(state, 0)), (std::vector<JobId>{4}));
  EXPECT_EQ(state.Withdraw(4).code(), StatusCode::kFailedPrecondition);  // it started
}

}  // namespace
}  // namespace sluice::core
