// Changes of a job in place (R-UX-7): JobModified keeps the sequence unless the queue changes
// (then the end of the new queue), refuses a bad spec without changing anything;
// RunLimitChanged moves a running job's estimated end; JobRevived brings an ended job back at
// its sequence under the same id.
#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::CycleAndCommit;
using testing::JobBuilder;
using testing::Started;
using testing::Submit;
using testing::SubmitRunning;

ClusterState TwoQueues() {
  return ClusterBuilder()
      .Hosts(2, 4)
      .Queue("a", PolicyKind::kFifo)
      .Queue("b", PolicyKind::kFifo)
      .State();
}

TEST(JobChangesTest, ModifyKeepsTheSequenceWithinItsQueue) {
  ClusterState state = TwoQueues();
  Submit(state, JobBuilder(1).Queue("a").Hold());
  Submit(state, JobBuilder(2).Queue("a"));
  const uint64_t seq = state.FindJob(1)->seq;
  JobSpec spec = state.FindJob(1)->spec;
  spec.max_tasks = spec.min_tasks = 3;
  spec.run_limit = 60;
  ASSERT_TRUE(Apply(JobModified{spec}, 10, state).ok());
  const Job* job = state.FindJob(1);
  EXPECT_EQ(job->seq, seq);
  EXPECT_EQ(job->state, JobState::kHeld);  // held stays held
  EXPECT_EQ(job->spec.min_tasks, 3);
  EXPECT_EQ(job->spec.run_limit, 60);
  EXPECT_EQ(state.topology().queues()[0].pending.begin()->job->spec.id, 1);
}

TEST(JobChangesTest, AQueueChangeGoesToTheEndOfTheNewQueue) {
  ClusterState state = TwoQueues();
  Submit(state, JobBuilder(1).Queue("a"));
  Submit(state, JobBuilder(2).Queue("b"));
  Submit(state, JobBuilder(3).Queue("b"));
  JobSpec spec = state.FindJob(1)->spec;
  spec.queue = "b";
  ASSERT_TRUE(Apply(JobModified{spec}, 10, state).ok());
  EXPECT_TRUE(state.topology().queues()[0].pending.empty());
  std::vector<JobId> order;
  for (const PendingEntry& e : state.topology().queues()[1].pending)
    order.push_back(e.job->spec.id);
  EXPECT_EQ(order, (std::vector<JobId>{2, 3, 1}));
  EXPECT_EQ(state.FindJob(1)->admission.enqueue_time, 10);
}

TEST(JobChangesTest, ABadSpecIsRefusedAndNothingChanges) {
  ClusterState state = TwoQueues();
  Submit(state, JobBuilder(1).Queue("a").Tasks(2));
  JobSpec spec = state.FindJob(1)->spec;
  spec.resreq = "span[ptile=";
  EXPECT_FALSE(Apply(JobModified{spec}, 10, state).ok());
  spec = state.FindJob(1)->spec;
  spec.queue = "nowhere";
  EXPECT_FALSE(Apply(JobModified{spec}, 10, state).ok());
  EXPECT_EQ(state.FindJob(1)->spec.min_tasks, 2);
  EXPECT_EQ(state.topology().queues()[0].pending.size(), 1u);
}

TEST(JobChangesTest, NeverRunsNamesAnImpossibleCandidate) {
  ClusterState state = TwoQueues();
  Submit(state, JobBuilder(1).Queue("a"));
  JobSpec spec = state.FindJob(1)->spec;
  spec.min_tasks = spec.max_tasks = 100;
  Result<Job> candidate = state.Candidate(spec);
  ASSERT_TRUE(candidate);
  EXPECT_TRUE(Scheduler().NeverRuns(*candidate, state).has_value());
  spec.min_tasks = spec.max_tasks = 8;
  candidate = state.Candidate(spec);
  ASSERT_TRUE(candidate);
  EXPECT_FALSE(Scheduler().NeverRuns(*candidate, state).has_value());
}

TEST(JobChangesTest, ARunLimitChangeMovesTheEstimatedEnd) {
  ClusterState state = TwoQueues();
  SubmitRunning(state, JobBuilder(1).Queue("a").Tasks(8).Limit(100), 0);
  ASSERT_EQ(state.running_by_end().begin()->end, 100);
  ASSERT_TRUE(Apply(RunLimitChanged{1, 500}, 5, state).ok());
  EXPECT_EQ(state.running_by_end().begin()->end, 500);
  EXPECT_EQ(state.FindJob(1)->EstimatedEnd(), 500);
  EXPECT_FALSE(Apply(RunLimitChanged{2, 5}, 5, state).ok());
}

TEST(JobChangesTest, ARevivedJobPendsAtItsSequenceAheadOfLaterJobs) {
  ClusterState state = TwoQueues();
  SubmitRunning(state, JobBuilder(1).Queue("a").Tasks(8), 0);
  Submit(state, JobBuilder(2).Queue("a").Tasks(8));
  const uint64_t seq = state.FindJob(1)->seq;
  ASSERT_TRUE(Apply(JobFinished{1, 0}, 10, state).ok());
  ASSERT_TRUE(Apply(JobForgotten{1}, 10, state).ok());  // only noted as ended
  // Job 2 starts, ends; then job 1 comes back and goes first, ahead of job 3.
  CycleAndCommit(state, 10);
  ASSERT_TRUE(Apply(JobFinished{2, 0}, 20, state).ok());
  Submit(state, JobBuilder(3).Queue("a").Tasks(8));
  JobSpec spec = JobBuilder(1).Queue("a").Tasks(8);
  ASSERT_TRUE(Apply(JobRevived{spec, seq}, 20, state).ok());
  EXPECT_EQ(state.FindJob(1)->state, JobState::kPending);
  EXPECT_EQ(state.FindJob(1)->seq, seq);
  EXPECT_EQ(Started(CycleAndCommit(state, 21)), std::vector<JobId>{1});
  // A job that never ended is not revived.
  EXPECT_FALSE(Apply(JobRevived{JobBuilder(3).Queue("a").Tasks(8), 99}, 22, state).ok());
}

// Arrays (R-UX-3) change as a whole through cancel/hold/release only: modify, a run-limit
// change and a requeue of an element or of the array are refused, saying why, and change
// nothing.
TEST(JobChangesTest, ArrayElementsAndArraysAreRefusedWithAClearMessage) {
  ClusterState state = TwoQueues();
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(1).Queue("a"), "1-4"}, 0, state).ok());
  CycleAndCommit(state, 0);
  const JobId element = ArrayElementId(1, 1);
  const Job* job = state.FindJob(element);
  ASSERT_NE(job, nullptr);
  JobSpec spec = job->spec;
  spec.run_limit = 60;
  const Status modified = Apply(JobModified{spec}, 10, state);
  EXPECT_EQ(modified.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(modified.message().find("job 1[1] is an element of array 1"), std::string::npos)
      << modified.message();
  EXPECT_EQ(Apply(RunLimitChanged{element, 60}, 10, state).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Apply(JobRevived{spec, 99}, 10, state).code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(state.FindJob(element)->spec.run_limit, std::optional<Duration>(60));
  JobSpec whole = JobBuilder(1).Queue("a");
  const Status array = Apply(JobModified{whole}, 10, state);
  EXPECT_EQ(array.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(array.message().find("is a job array"), std::string::npos) << array.message();
}

}  // namespace
}  // namespace sluice::core
