// DependencyTracker: verdicts re-evaluated when a named job changes, and kept for jobs that
// leave the table.
#include "core/model/dependency_tracker.h"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

Job MakeJob(JobId id, JobState state, uint64_t start_seq = 0) {
  Job job;
  job.spec.id = id;
  job.state = state;
  job.start_seq = start_seq;
  return job;
}

Dependency Parse(std::string_view text) { return std::move(Dependency::Parse(text)).value(); }

TEST(DependencyTrackerTest, AVerdictFollowsTheNamedJob) {
  JobTable jobs;
  jobs.emplace(1, MakeJob(1, JobState::kPending));
  jobs.emplace(2, MakeJob(2, JobState::kPending));
  DependencyTracker tracker;
  tracker.Track(2, Parse("done(1)"), jobs);
  EXPECT_EQ(tracker.Of(1), nullptr);
  ASSERT_NE(tracker.Of(2), nullptr);
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kWaiting);
  jobs.at(1).state = JobState::kDone;
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kWaiting);  // not told yet
  tracker.OnChanged(1, jobs);
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kSatisfied);
}

TEST(DependencyTrackerTest, AJobThatNoLongerWaitsKeepsItsVerdict) {
  JobTable jobs;
  jobs.emplace(1, MakeJob(1, JobState::kRunning, 1));
  jobs.emplace(2, MakeJob(2, JobState::kPending));
  DependencyTracker tracker;
  tracker.Track(2, Parse("started(1)"), jobs);
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kSatisfied);
  jobs.at(2).state = JobState::kRunning;
  jobs.at(1).state = JobState::kExit;
  tracker.OnChanged(1, jobs);
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kSatisfied);
}

TEST(DependencyTrackerTest, EndedJobsOutsideTheTableKeepTheirOutcome) {
  JobTable jobs;
  jobs.emplace(2, MakeJob(2, JobState::kPending));
  DependencyTracker tracker;
  tracker.Track(2, Parse("done(1) && exit(3)"), jobs);
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kNever);  // 1 and 3 are unknown
  tracker.NoteEnded(1, DependTarget{.state = JobState::kDone, .started = true}, jobs);
  EXPECT_TRUE(tracker.HasEnded(1));
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kNever);  // 3 still unknown
  jobs.emplace(3, MakeJob(3, JobState::kExit));
  tracker.OnChanged(3, jobs);
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kSatisfied);
  tracker.Forget(jobs.at(3));
  jobs.erase(3);
  EXPECT_TRUE(tracker.HasEnded(3));
  EXPECT_EQ(tracker.ended_count(), 2);
  EXPECT_EQ(tracker.Of(2)->verdict, DependVerdict::kSatisfied);
}

TEST(DependencyTrackerTest, WithdrawLeavesNoTrace) {
  JobTable jobs;
  jobs.emplace(1, MakeJob(1, JobState::kPending));
  jobs.emplace(2, MakeJob(2, JobState::kPending));
  DependencyTracker tracker;
  tracker.Track(2, Parse("done(1)"), jobs);
  tracker.Withdraw(2);
  jobs.erase(2);
  EXPECT_EQ(tracker.Of(2), nullptr);
  jobs.at(1).state = JobState::kDone;
  tracker.OnChanged(1, jobs);  // must not reach the withdrawn job
  EXPECT_FALSE(tracker.HasEnded(2));
}

}  // namespace
}  // namespace sluice::core

namespace sluice::core {
namespace {

// Issue 48: a job may not be made to wait for itself, directly or through others.
TEST(DependencyTrackerCycleTest, NamesTheCycleAChangedDependencyWouldClose) {
  JobTable jobs;
  for (JobId id : {1, 2, 3, 4}) jobs.emplace(id, MakeJob(id, JobState::kPending));
  DependencyTracker tracker;
  tracker.Track(2, Parse("done(1)"), jobs);
  tracker.Track(3, Parse("done(2) || exit(4)"), jobs);
  EXPECT_EQ(tracker.CycleThrough(5, Parse("done(5)")), (std::vector<JobId>{5, 5}));
  EXPECT_EQ(tracker.CycleThrough(2, Parse("done(3)")), (std::vector<JobId>{2, 3, 2}));
  EXPECT_EQ(tracker.CycleThrough(1, Parse("done(4) && ended(3)")),
            (std::vector<JobId>{1, 3, 2, 1}));
  // 3 waits for 4 (one side of its ||): 4 waiting for 3 would close 4 -> 3 -> 4.
  EXPECT_EQ(tracker.CycleThrough(4, Parse("done(3)")), (std::vector<JobId>{4, 3, 4}));
  EXPECT_TRUE(tracker.CycleThrough(4, Parse("done(1)")).empty());
  EXPECT_TRUE(tracker.CycleThrough(1, Parse("done(4)")).empty());
}

}  // namespace
}  // namespace sluice::core
