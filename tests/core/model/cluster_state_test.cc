#include "core/model/cluster_state.h"

#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

TEST(ClusterStateTest, UniformClusterNamesHostsWithPadding) {
  ClusterConfig config = UniformCluster(12, 2);
  ASSERT_EQ(config.hosts.size(), 12u);
  EXPECT_EQ(config.hosts.front().name, "h01");
  EXPECT_EQ(config.hosts.back().name, "h12");
  EXPECT_EQ(config.queues.size(), 1u);
}

TEST(ClusterStateTest, StartAndFinishKeepSlotAccountsBalanced) {
  ClusterState state = ClusterBuilder().Hosts(2, 4).State();
  SubmitRunning(state, JobBuilder(1).Tasks(6), 0);
  EXPECT_EQ(state.topology().free_slots(), 2);
  EXPECT_EQ(state.topology().hosts()[0].used_slots, 4);
  EXPECT_EQ(state.topology().hosts()[1].used_slots, 2);
  EXPECT_EQ(state.topology().queues()[0].used_slots, 6);
  ASSERT_TRUE(Apply(JobFinished{1}, 50, state).ok());
  EXPECT_EQ(state.topology().free_slots(), 8);
  EXPECT_EQ(state.FindJob(1)->state, JobState::kDone);
  EXPECT_EQ(state.FindJob(1)->end_time, 50);
  EXPECT_TRUE(state.running().empty());
  EXPECT_EQ(state.topology().queues()[0].used_slots, 0);
}

TEST(ClusterStateTest, NonZeroExitEndsInExit) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).State();
  SubmitRunning(state, JobBuilder(1), 0);
  ASSERT_TRUE(Apply(JobFinished{1, 3}, 5, state).ok());
  EXPECT_EQ(state.FindJob(1)->state, JobState::kExit);
  EXPECT_EQ(state.FindJob(1)->exit_cause, ExitCause::kNonZeroExit);
}

TEST(ClusterStateTest, CancelRemovesPendingAndReleasesRunning) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  SubmitRunning(state, JobBuilder(1), 0);
  Submit(state, JobBuilder(2).Tasks(2));
  ASSERT_TRUE(Apply(JobCancelled{2}, 3, state).ok());
  EXPECT_TRUE(state.topology().queues()[0].pending.empty());
  EXPECT_EQ(state.FindJob(2)->state, JobState::kCancelled);
  ASSERT_TRUE(Apply(JobCancelled{1}, 4, state).ok());
  EXPECT_EQ(state.topology().free_slots(), 2);
  EXPECT_EQ(Apply(JobCancelled{1}, 5, state).code(), StatusCode::kFailedPrecondition);
}

TEST(ClusterStateTest, RefusedEventsChangeNothing) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  Submit(state, JobBuilder(1));
  struct Case {
    std::string_view name;
    Event event;
    StatusCode want;
  };
  const Case cases[] = {
      {"duplicate id", JobSubmitted{JobBuilder(1)}, StatusCode::kAlreadyExists},
      {"unknown queue", JobSubmitted{JobBuilder(2).Queue("nope")}, StatusCode::kNotFound},
      {"empty task range", JobSubmitted{JobBuilder(3).TaskRange(3, 2)},
       StatusCode::kInvalidArgument},
      {"zero tasks", JobSubmitted{JobBuilder(4).Tasks(0)}, StatusCode::kInvalidArgument},
      {"cancel unknown", JobCancelled{99}, StatusCode::kNotFound},
      {"finish pending", JobFinished{1}, StatusCode::kFailedPrecondition},
      {"unknown host", HostChanged{"nope", HostState::kClosed}, StatusCode::kNotFound},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Apply(c.event, 1, state).code(), c.want);
  }
  EXPECT_EQ(state.job_count(), 1);
  EXPECT_EQ(state.topology().queues()[0].pending.size(), 1u);
}

// Issue 44: a run requeued with its lost host, then reported ended by that host, ends its
// waiting job (the server says so with lost_run); a running job is not ended that way.
TEST(ClusterStateTest, ALostRunsEndEndsItsWaitingJob) {
  ClusterState state = ClusterBuilder().Hosts(1, 2).State();
  Submit(state, JobBuilder(1));
  EXPECT_EQ(Apply(JobFinished{.job = 1, .exit_code = 3, .lost_run = true}, 5, state).code(),
            StatusCode::kOk);
  ASSERT_NE(state.FindJob(1), nullptr);
  EXPECT_EQ(state.FindJob(1)->state, JobState::kExit);
  EXPECT_EQ(state.FindJob(1)->exit_code, 3);
  EXPECT_TRUE(state.topology().queues()[0].pending.empty());
  EXPECT_EQ(state.topology().free_slots(), 2);
}

TEST(ClusterStateTest, HostStateChangesFreeCapacityNotTotal) {
  ClusterState state = ClusterBuilder().Host("a", 4).Host("b", 4).State();
  ASSERT_TRUE(Apply(HostChanged{"a", HostState::kClosed}, 0, state).ok());
  EXPECT_EQ(state.topology().free_slots(), 4);
  EXPECT_EQ(state.topology().total_slots(), 8);
  ASSERT_TRUE(Apply(HostLost{"b"}, 0, state).ok());
  EXPECT_EQ(state.topology().free_slots(), 0);
  ASSERT_TRUE(Apply(HostChanged{"a", HostState::kOk}, 0, state).ok());
  EXPECT_EQ(state.topology().free_slots(), 4);
}

// A queue with jobs cannot go; a host running jobs can, it drains (host_drain_test.cc).
TEST(ClusterStateTest, ReconfigureRefusesToDropAQueueWithJobsNotAHost) {
  ClusterState state = ClusterBuilder()
                           .Host("a", 2)
                           .Host("b", 2)
                           .Queue("q1", PolicyKind::kFifo)
                           .Queue("q2", PolicyKind::kFifo)
                           .State();
  SubmitRunning(state, JobBuilder(1).Tasks(2).Queue("q2"), 0);
  ClusterConfig without_q2 = state.config();
  without_q2.queues.pop_back();
  EXPECT_EQ(state.Reconfigure(without_q2).code(), StatusCode::kFailedPrecondition);
  ClusterConfig bigger = state.config();
  bigger.hosts[1].slots = 8;
  ASSERT_TRUE(state.Reconfigure(bigger).ok());
  EXPECT_EQ(state.topology().total_slots(), 10);
  EXPECT_EQ(state.topology().free_slots(), 8);
  ClusterConfig without_a = state.config();
  without_a.hosts.erase(without_a.hosts.begin());
  ASSERT_TRUE(state.Reconfigure(without_a).ok());
  EXPECT_EQ(state.topology().hosts()[0].membership, HostMembership::kLeaving);
  EXPECT_EQ(state.FindJob(1)->state, JobState::kRunning);
  EXPECT_EQ(state.topology().free_slots(), 8);
}

}  // namespace
}  // namespace sluice::core
