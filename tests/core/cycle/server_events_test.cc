// The server's restart and retention events (events.h): a restored job and its allocation,
// ended jobs noted for dependencies, forgotten and withdrawn jobs. Each goes through Apply
// and leaves the state unchanged when refused.
#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

Allocation OnFirstHost(int32_t slots) {
  return Allocation{.hosts = {HostGrant{.host = 0, .slots = slots}}};
}

TEST(ServerEventsTest, ARestoredAllocationRunsTheJobAgain) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  ASSERT_TRUE(Apply(JobRestored{JobBuilder(5).Build(), 3, AdmissionRecord{}}, 0, state).ok());
  ASSERT_TRUE(
      Apply(AllocationRestored{.job = 5, .allocation = OnFirstHost(1), .start_time = 7}, 10, state)
          .ok());
  EXPECT_EQ(state.FindJob(5)->state, JobState::kRunning);
  EXPECT_EQ(state.FindJob(5)->start_time, 7);
  EXPECT_EQ(state.FindJob(5)->seq, 3u);
  EXPECT_EQ(state.topology().free_slots(), 1);
}

TEST(ServerEventsTest, AnAllocationThatNoLongerFitsIsRefusedAndChangesNothing) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  ASSERT_TRUE(Apply(JobRestored{JobBuilder(5).Build(), 1, AdmissionRecord{}}, 0, state).ok());
  EXPECT_EQ(Apply(AllocationRestored{.job = 5, .allocation = OnFirstHost(3)}, 0, state).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Apply(AllocationRestored{.job = 5, .allocation = Allocation{}}, 0, state).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Apply(AllocationRestored{.job = 6, .allocation = OnFirstHost(1)}, 0, state).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(state.FindJob(5)->state, JobState::kPending);
  EXPECT_EQ(state.topology().free_slots(), 2);
}

TEST(ServerEventsTest, NotedEndedJobsAreKnownAndForgottenJobsLeaveTheTable) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  ASSERT_TRUE(
      Apply(EndedJobNoted{.job = 4, .state = JobState::kDone, .started = true}, 0, state).ok());
  EXPECT_TRUE(state.Knows(4));
  EXPECT_EQ(state.FindJob(4), nullptr);
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(5).Build()}, 0, state).ok());
  EXPECT_EQ(Apply(JobForgotten{5}, 0, state).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Apply(JobCancelled{5}, 1, state).ok());
  ASSERT_TRUE(Apply(JobForgotten{5}, 2, state).ok());
  EXPECT_EQ(state.FindJob(5), nullptr);
  EXPECT_TRUE(state.Knows(5));
}

TEST(ServerEventsTest, AWithdrawnSubmissionIsAsIfNeverMade) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  ASSERT_TRUE(Apply(JobSubmitted{JobBuilder(5).Build()}, 0, state).ok());
  ASSERT_TRUE(Apply(JobWithdrawn{5}, 0, state).ok());
  EXPECT_FALSE(state.Knows(5));
  EXPECT_EQ(Apply(JobWithdrawn{5}, 0, state).code(), StatusCode::kNotFound);
}

TEST(ServerEventsTest, AReclaimDeadlineIsRestoredForItsQueue) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  ASSERT_TRUE(Apply(ReclaimDeadlineRestored{.queue = 0, .deadline = 90}, 0, state).ok());
  EXPECT_EQ(state.topology().queues()[0].reclaim_deadline, 90);
  EXPECT_EQ(Apply(ReclaimDeadlineRestored{.queue = 99, .deadline = 1}, 0, state).code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace sluice::core
