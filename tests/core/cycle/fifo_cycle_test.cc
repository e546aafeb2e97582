// One cycle per test: given a state and `now`, the decisions and the reasons of the jobs
// left pending under the fifo policy (R-ADM-1, R-ADM-2).
#include <gtest/gtest.h>

#include "core/cycle/scheduler.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::ReasonsOf;
using testing::Started;
using testing::StartOf;
using testing::Submit;
using testing::SubmitRunning;

CycleResult Cycle(const ClusterState& state, Instant now) {
  return testing::ExplainedCycle(state, now);
}

TEST(FifoCycleTest, StartsInQueueOrderUntilTheHeadDoesNotFit) {
  ClusterState state = ClusterBuilder().Hosts(10, 1).Policy(PolicyKind::kFifo).State();
  Submit(state, JobBuilder(1).Tasks(4));
  Submit(state, JobBuilder(2).Tasks(4));
  Submit(state, JobBuilder(3).Tasks(4));
  Submit(state, JobBuilder(4).Tasks(1));
  CycleResult result = Cycle(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 2}));
  auto head = ReasonsOf(result, 3);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->main, ReasonCode::kNoResource);
  EXPECT_EQ(head->details[0].needed, 4);
  EXPECT_EQ(head->details[0].available, 2);
  auto behind = ReasonsOf(result, 4);
  ASSERT_TRUE(behind.has_value());
  EXPECT_EQ(behind->main, ReasonCode::kPriorityWait);
  EXPECT_EQ(behind->details[0].job, 3);
}

TEST(FifoCycleTest, OneSlotJobWaitsBehindABlockedTenSlotHead) {
  ClusterState state = ClusterBuilder().Hosts(10, 1).Policy(PolicyKind::kFifo).State();
  SubmitRunning(state, JobBuilder(1).Tasks(7).Limit(100), 0);
  Submit(state, JobBuilder(2).Tasks(10).Submit(5));
  Submit(state, JobBuilder(3).Tasks(1).Submit(6));
  CycleResult result = Cycle(state, 10);
  EXPECT_TRUE(Started(result).empty());
  EXPECT_EQ(ReasonsOf(result, 3)->main, ReasonCode::kPriorityWait);
}

TEST(FifoCycleTest, RequestLargerThanTheClusterFailsAtOnceAndBlocksNobody) {
  ClusterState state = ClusterBuilder().Hosts(3, 1).Policy(PolicyKind::kFifo).State();
  Submit(state, JobBuilder(1).Tasks(10));
  Submit(state, JobBuilder(2).Tasks(1));
  CycleResult result = Cycle(state, 0);
  ASSERT_FALSE(result.decisions.empty());
  const auto* fail = std::get_if<FailJob>(&result.decisions[0]);
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ(fail->job, 1);
  EXPECT_EQ(fail->cause, ExitCause::kUnschedulable);
  EXPECT_EQ(fail->message, "asks 10 slots; the eligible hosts have 3 in total");
  EXPECT_EQ(Started(result), (std::vector<JobId>{2}));
  EXPECT_EQ(result.stats.failed, 1);
}

TEST(FifoCycleTest, ClassificationHappensOnceUntilTheConfigChanges) {
  ClusterState state = ClusterBuilder()
                           .Host("h1", 1)
                           .Host("h2", 1)
                           .Host("h3", 1, HostState::kClosed)
                           .Policy(PolicyKind::kFifo)
                           .State();
  Submit(state, JobBuilder(1).Tasks(3));
  CycleResult first = Cycle(state, 1);
  EXPECT_EQ(first.stats.failed, 0);  // h3 is closed, not absent: temporarily unavailable
  Commit(first, 1, state);
  EXPECT_TRUE(state.unclassified().empty());
  EXPECT_TRUE(state.FindJob(1)->classified);
  // Removing h3 from the configuration leaves 2 slots: job 1 can never run.
  ClusterConfig config = state.config();
  config.hosts.pop_back();
  ASSERT_TRUE(state.Reconfigure(config).ok());
  EXPECT_EQ(state.topology().total_slots(), 2);
  EXPECT_EQ(state.unclassified(), (std::vector<JobId>{1}));
  CycleResult second = Cycle(state, 2);
  EXPECT_EQ(second.stats.failed, 1);
}

TEST(FifoCycleTest, HostsThatAreDownCountAsCapacity) {
  ClusterState state = ClusterBuilder()
                           .Host("a", 5)
                           .Host("b", 5, HostState::kClosed)
                           .Policy(PolicyKind::kFifo)
                           .State();
  Submit(state, JobBuilder(1).Tasks(10));
  CycleResult result = Cycle(state, 0);
  EXPECT_EQ(result.stats.failed, 0);
  EXPECT_TRUE(Started(result).empty());
  auto reasons = ReasonsOf(result, 1);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kNoResource);
  ASSERT_EQ(reasons->details.size(), 2u);
  EXPECT_EQ(reasons->details[0], (ReasonDetail{.code = ReasonCode::kHostClosed, .hosts = 1}));
  EXPECT_EQ(reasons->details[1].available, 5);
  EXPECT_EQ(reasons->details[1].hosts, 1);  // only "a" accepts work
}

TEST(FifoCycleTest, OnlyHostsThatAcceptWorkReceiveIt) {
  ClusterState state = ClusterBuilder()
                           .Host("a", 2, HostState::kDraining)
                           .Host("b", 2, HostState::kUnavail)
                           .Host("c", 2)
                           .Policy(PolicyKind::kFifo)
                           .State();
  Submit(state, JobBuilder(1).Tasks(2));
  CycleResult result = Cycle(state, 0);
  ASSERT_EQ(Started(result), (std::vector<JobId>{1}));
  EXPECT_EQ(StartOf(result, 1)->allocation.hosts, (std::vector<HostGrant>{{2, 2}}));
}

TEST(FifoCycleTest, JobPriorityOrdersTheQueueBeforeSubmissionOrder) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).Policy(PolicyKind::kFifo).State();
  Submit(state, JobBuilder(1).Tasks(2));
  Submit(state, JobBuilder(2).Tasks(1).Priority(5));
  CycleResult result = Cycle(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{2}));
  EXPECT_EQ(ReasonsOf(result, 1)->main, ReasonCode::kNoResource);
}

TEST(FifoCycleTest, HigherPriorityQueueAdmitsFirst) {
  ClusterState state = ClusterBuilder()
                           .Hosts(2, 1)
                           .Queue("low", PolicyKind::kFifo, 1)
                           .Queue("high", PolicyKind::kFifo, 9)
                           .State();
  Submit(state, JobBuilder(1).Tasks(2).Queue("low"));
  Submit(state, JobBuilder(2).Tasks(2).Queue("high"));
  EXPECT_EQ(Started(Cycle(state, 0)), (std::vector<JobId>{2}));
}

TEST(FifoCycleTest, HeldJobIsSkippedNotAHead) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).Policy(PolicyKind::kFifo).State();
  Submit(state, JobBuilder(1).Tasks(1).Hold());
  Submit(state, JobBuilder(2).Tasks(1));
  CycleResult result = Cycle(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{2}));
  EXPECT_EQ(ReasonsOf(result, 1)->main, ReasonCode::kHeld);
}

TEST(FifoCycleTest, TaskRangeTakesTheLargestCountThatFits) {
  ClusterState state = ClusterBuilder().Hosts(5, 1).Policy(PolicyKind::kFifo).State();
  SubmitRunning(state, JobBuilder(1).Tasks(2), 0);
  Submit(state, JobBuilder(2).TaskRange(2, 8));
  CycleResult result = Cycle(state, 1);
  ASSERT_EQ(Started(result), (std::vector<JobId>{2}));
  EXPECT_EQ(StartOf(result, 2)->allocation.TotalSlots(), 3);
}

TEST(FifoCycleTest, SameStateSameDecisionsAndExplainingChangesNoDecision) {
  ClusterState state = ClusterBuilder().Hosts(6, 2).Policy(PolicyKind::kFifo).State();
  for (JobId id = 1; id <= 20; ++id) Submit(state, JobBuilder(id).Tasks(1 + id % 5));
  Scheduler scheduler;
  CycleResult a = scheduler.RunCycle(state, 0, {.explain = false});
  CycleResult b = scheduler.RunCycle(state, 0, {.explain = false});
  CycleResult c = scheduler.RunCycle(state, 0, {.explain = true});
  EXPECT_EQ(Started(a), Started(b));
  EXPECT_EQ(Started(a), Started(c));
}

}  // namespace
}  // namespace sluice::core
