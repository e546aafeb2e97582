// Fairshare within a queue (R-Q-4): dynamic priority from shares and decayed usage orders
// the queue's pending jobs; jobs behind another user's head wait with FAIRSHARE.
#include <gtest/gtest.h>

#include "core/admission/fairshare.h"
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

QueueSpec FairQueue(std::map<std::string, double> shares, Duration half_life = 3600) {
  return QueueSpec{
      .name = "fair", .fairshare = std::move(shares), .fairshare_half_life = half_life};
}

TEST(FairshareCycleTest, EqualSharesAlternateUsersWhateverTheSubmissionOrder) {
  ClusterState state = ClusterBuilder().Hosts(4, 1).Queue(FairQueue({{"default", 1}})).State();
  for (JobId id = 1; id <= 4; ++id)
    Submit(state, JobBuilder(id).Tasks(1).Queue("fair").User("alice"));
  for (JobId id = 5; id <= 8; ++id)
    Submit(state, JobBuilder(id).Tasks(1).Queue("fair").User("bob"));
  CycleResult result = CycleAndCommit(state, 0);
  EXPECT_EQ(Started(result), (std::vector<JobId>{1, 5, 2, 6}));
  auto reasons = ReasonsOf(result, 7);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_EQ(reasons->main, ReasonCode::kFairshare);
}

TEST(FairshareCycleTest, SharesWeightTheTurns) {
  ClusterState state =
      ClusterBuilder().Hosts(4, 1).Queue(FairQueue({{"alice", 3}, {"bob", 1}})).State();
  for (JobId id = 1; id <= 4; ++id)
    Submit(state, JobBuilder(id).Tasks(1).Queue("fair").User("bob"));
  for (JobId id = 5; id <= 8; ++id)
    Submit(state, JobBuilder(id).Tasks(1).Queue("fair").User("alice"));
  std::vector<JobId> started = Started(CycleAndCommit(state, 0));
  int alice = 0;
  for (JobId id : started) alice += id >= 5;
  EXPECT_EQ(alice, 3);  // 3:1
  EXPECT_EQ(started.front(), 5);
}

TEST(FairshareCycleTest, PastUsageLowersPriorityAndDecaysWithTheHalfLife) {
  ClusterState state =
      ClusterBuilder().Hosts(1, 1).Queue(FairQueue({{"default", 1}}, 3600)).State();
  Submit(state, JobBuilder(1).Tasks(1).Queue("fair").User("alice"));
  CycleAndCommit(state, 0);
  ASSERT_TRUE(Apply(JobFinished{.job = 1}, 36000, state).ok());  // 10 slot-hours for alice
  const FairshareUsage& usage = state.usage().fairshare().at({0, "alice"});
  EXPECT_DOUBLE_EQ(usage.At(36000, 3600), 36000);
  EXPECT_DOUBLE_EQ(usage.At(36000 + 3600, 3600), 18000);
  Submit(state, JobBuilder(2).Tasks(1).Queue("fair").User("alice").Submit(36000));
  Submit(state, JobBuilder(3).Tasks(1).Queue("fair").User("bob").Submit(36001));
  EXPECT_EQ(Started(CycleAndCommit(state, 36001)), (std::vector<JobId>{3}));  // bob first
}

TEST(FairshareCycleTest, OrderIsDeterministicOnTies) {
  ClusterState state = ClusterBuilder().Hosts(1, 1).Queue(FairQueue({})).State();
  Submit(state, JobBuilder(1).Tasks(1).Queue("fair").User("zed"));
  Submit(state, JobBuilder(2).Tasks(1).Queue("fair").User("amy"));
  // Fairshare configured with no entries is off: plain queue order.
  EXPECT_EQ(Started(CycleAndCommit(state, 0)), (std::vector<JobId>{1}));
  ClusterState fair = ClusterBuilder().Hosts(1, 1).Queue(FairQueue({{"default", 1}})).State();
  Submit(fair, JobBuilder(1).Tasks(1).Queue("fair").User("zed"));
  Submit(fair, JobBuilder(2).Tasks(1).Queue("fair").User("amy"));
  EXPECT_EQ(Started(CycleAndCommit(fair, 0)), (std::vector<JobId>{2}));  // tie: by name
}

}  // namespace
}  // namespace sluice::core
