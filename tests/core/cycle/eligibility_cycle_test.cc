// Jobs that may not be tried for a reason of policy are skipped, never heads (R-ADM-2,
// R-Q-1, R-Q-3): begin time, an inactive queue, the queue's run and slot limits.
#include <gtest/gtest.h>

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

CycleResult Cycle(const ClusterState& state, Instant now) {
  return testing::ExplainedCycle(state, now);
}

TEST(EligibilityCycleTest, ABeginTimeInTheFutureSkipsTheJobAndSetsATimer) {
  ClusterState state = ClusterBuilder().Hosts(2, 1).State();
  JobSpec later = JobBuilder(1).Tasks(2);
  later.begin_time = 100;
  Submit(state, later);
  Submit(state, JobBuilder(2).Tasks(1));
  CycleResult result = Cycle(state, 10);
  EXPECT_EQ(Started(result), (std::vector<JobId>{2}));  // job 1 is not a fifo head
  auto reasons = ReasonsOf(result, 1);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kBeginTime);
  EXPECT_EQ(reasons->details[0].time, 100);
  EXPECT_EQ(result.wake_at, 100);
  EXPECT_EQ(Started(Cycle(state, 100)), (std::vector<JobId>{1}));
}

TEST(EligibilityCycleTest, AnInactiveQueueDispatchesNothing) {
  ClusterState state = ClusterBuilder()
                           .Hosts(2, 1)
                           .Queue(QueueSpec{.name = "off", .priority = 9, .active = false})
                           .Queue(QueueSpec{.name = "on"})
                           .State();
  Submit(state, JobBuilder(1).Queue("off"));
  Submit(state, JobBuilder(2).Queue("on"));
  CycleResult result = Cycle(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{2}));
  EXPECT_EQ(ReasonsOf(result, 1)->main, ReasonCode::kQueueInactive);
}

TEST(EligibilityCycleTest, TheQueueRunLimitCountsThisCyclesStarts) {
  QueueSpec queue{.name = "normal", .run_limit = 2};
  ClusterState state = ClusterBuilder().Hosts(4, 1).Queue(queue).State();
  SubmitRunning(state, JobBuilder(1), 0);
  for (JobId id = 2; id <= 4; ++id) Submit(state, JobBuilder(id));
  CycleResult result = Cycle(state, 1);
  EXPECT_EQ(Started(result), (std::vector<JobId>{2}));
  auto reasons = ReasonsOf(result, 3);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kQueueRunLimit);
  EXPECT_EQ(reasons->details[0].needed, 2);
  EXPECT_EQ(reasons->details[0].available, 2);
}

TEST(EligibilityCycleTest, TheQueueSlotLimitSkipsOnlyJobsThatWouldExceedIt) {
  QueueSpec queue{.name = "normal", .slot_limit = 4};
  ClusterState state = ClusterBuilder().Hosts(8, 1).Queue(queue).State();
  SubmitRunning(state, JobBuilder(1).Tasks(2), 0);
  Submit(state, JobBuilder(2).Tasks(3));  // 2 + 3 > 4: skipped, not a head
  Submit(state, JobBuilder(3).Tasks(2));  // 2 + 2 = 4: starts
  CycleResult result = Cycle(state, 1);
  EXPECT_EQ(Started(result), (std::vector<JobId>{3}));
  auto reasons = ReasonsOf(result, 2);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kQueueRunLimit);
  EXPECT_EQ(reasons->details[0].resource, "slots");
}

}  // namespace
}  // namespace sluice::core
