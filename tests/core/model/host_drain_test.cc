// A host the configuration drops while it runs jobs is closed and drains (R-OPS-3, issue 43),
// as ClusterState and the cycle see it: the reload is accepted, nothing new starts there and
// pending jobs say why, its jobs run to their end, and the end of its last one (a finish, a
// cancel, a requeue) takes it out of the cluster and has every pending job classified again.
// Topology's own rules are in topology_test.cc.
#include <gtest/gtest.h>

#include "core/cycle/events.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::CycleAndCommit;
using testing::ExplainedCycle;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Started;
using testing::Submit;
using testing::SubmitRunning;

// a (2 slots) runs job 1 on both; b (4 slots) runs job 2 on one.
ClusterState BothBusy() {
  ClusterState state = ClusterBuilder().Host("a", 2).Host("b", 4).State();
  SubmitRunning(state, JobBuilder(1).Tasks(2), 0);
  SubmitRunning(state, JobBuilder(2).Tasks(1), 0);
  return state;
}

ClusterConfig WithoutB(const ClusterState& state) {
  ClusterConfig config = state.config();
  config.hosts.pop_back();
  return config;
}

const Host& B(const ClusterState& state) { return state.topology().hosts()[1]; }

TEST(HostDrainTest, AReloadWithoutABusyHostIsAcceptedAndClosesIt) {
  ClusterState state = BothBusy();
  ASSERT_TRUE(Apply(ConfigChanged{WithoutB(state)}, 10, state).ok());
  EXPECT_EQ(B(state).membership, HostMembership::kLeaving);
  EXPECT_EQ(B(state).spec.state, HostState::kClosed);
  EXPECT_EQ(state.FindJob(2)->state, JobState::kRunning);  // not killed, not requeued
  EXPECT_EQ(state.running().size(), 2u);
  EXPECT_EQ(state.config().hosts.size(), 1u);
}

TEST(HostDrainTest, NothingStartsOnADrainingHostAndPendingJobsSayWhy) {
  ClusterState state = BothBusy();
  ASSERT_TRUE(Apply(ConfigChanged{WithoutB(state)}, 10, state).ok());
  // Its agent comes back: still closed.
  ASSERT_TRUE(Apply(HostChanged{"b", HostState::kOk}, 11, state).ok());
  Submit(state, JobBuilder(3).Tasks(1).Submit(12));
  CycleResult result = CycleAndCommit(state, 12);
  EXPECT_TRUE(Started(result).empty());  // b has 3 free slots, closed
  EXPECT_EQ(state.FindJob(3)->state, JobState::kPending);
  std::optional<PendingReasons> reasons = ReasonsOf(ExplainedCycle(state, 13), 3);
  ASSERT_TRUE(reasons.has_value());
  bool closed = false;
  for (const ReasonDetail& d : reasons->details) closed |= d.code == ReasonCode::kHostClosed;
  EXPECT_TRUE(closed);
  // a frees: job 3 starts there, not on b.
  ASSERT_TRUE(Apply(JobFinished{1}, 14, state).ok());
  result = CycleAndCommit(state, 14);
  ASSERT_EQ(Started(result), std::vector<JobId>{3});
  EXPECT_EQ(state.FindJob(3)->allocation.hosts[0].host, 0u);
}

TEST(HostDrainTest, ItsLastJobEndTakesItOutAndClassifiesPendingJobsAgain) {
  ClusterState state = BothBusy();
  // Job 3 fits the cluster only while b is in it (5 tasks, 6 slots with b, 2 without).
  Submit(state, JobBuilder(3).Tasks(5));
  state.MarkClassified();
  ASSERT_TRUE(Apply(ConfigChanged{WithoutB(state)}, 10, state).ok());
  CycleAndCommit(state, 10);
  EXPECT_EQ(state.FindJob(3)->state, JobState::kPending);  // b drains: not yet impossible
  ASSERT_TRUE(Apply(JobFinished{2}, 20, state).ok());
  EXPECT_EQ(state.FindJob(2)->state, JobState::kDone);
  EXPECT_EQ(B(state).membership, HostMembership::kGone);
  EXPECT_EQ(B(state).spec.slots, 0);
  EXPECT_EQ(state.topology().total_slots(), 2);
  EXPECT_EQ(state.unclassified(), std::vector<JobId>{3});
  CycleAndCommit(state, 20);
  EXPECT_EQ(state.FindJob(3)->state, JobState::kExit);
  EXPECT_EQ(state.FindJob(3)->exit_cause, ExitCause::kUnschedulable);
}

TEST(HostDrainTest, ACancelledOrRequeuedLastJobTakesItOutToo) {
  {
    ClusterState state = BothBusy();
    ASSERT_TRUE(Apply(ConfigChanged{WithoutB(state)}, 10, state).ok());
    ASSERT_TRUE(Apply(JobCancelled{2}, 11, state).ok());
    EXPECT_EQ(B(state).membership, HostMembership::kGone);
  }
  ClusterState state = BothBusy();
  ASSERT_TRUE(Apply(ConfigChanged{WithoutB(state)}, 10, state).ok());
  ASSERT_TRUE(Apply(HostLost{"b"}, 11, state).ok());
  EXPECT_EQ(B(state).spec.state, HostState::kUnavail);
  ASSERT_TRUE(Apply(JobRequeued{2}, 12, state).ok());  // on_host_loss: requeue
  EXPECT_EQ(B(state).membership, HostMembership::kGone);
  EXPECT_EQ(state.FindJob(2)->state, JobState::kPending);
  EXPECT_EQ(state.unclassified(), std::vector<JobId>{2});  // classified with what remains
}

TEST(HostDrainTest, ListedAgainBeforeItDrainsItReopensAndStays) {
  ClusterState state = BothBusy();
  const ClusterConfig with_b = state.config();
  ASSERT_TRUE(Apply(ConfigChanged{WithoutB(state)}, 10, state).ok());
  ASSERT_TRUE(Apply(ConfigChanged{with_b}, 11, state).ok());
  EXPECT_EQ(B(state).membership, HostMembership::kListed);
  EXPECT_EQ(B(state).spec.state, HostState::kOk);
  Submit(state, JobBuilder(3).Tasks(3).Submit(12));
  EXPECT_EQ(Started(CycleAndCommit(state, 12)), std::vector<JobId>{3});
  ASSERT_TRUE(Apply(JobFinished{2}, 13, state).ok());
  EXPECT_EQ(B(state).membership, HostMembership::kListed);
  EXPECT_EQ(B(state).spec.slots, 4);
}

TEST(HostDrainTest, AnIdleHostDroppedIsGoneAtOnce) {
  ClusterState state = ClusterBuilder().Host("a", 2).Host("b", 4).State();
  SubmitRunning(state, JobBuilder(1).Tasks(2), 0);
  ASSERT_TRUE(Apply(ConfigChanged{WithoutB(state)}, 10, state).ok());
  EXPECT_EQ(B(state).membership, HostMembership::kGone);
  EXPECT_EQ(B(state).spec.state, HostState::kUnavail);
  EXPECT_EQ(state.topology().total_slots(), 2);
}

}  // namespace
}  // namespace sluice::core
