// ClusterState::running_by_end(): the running jobs by (estimated end, start order), kept as
// jobs start, finish, are cancelled, requeued and cloned (EASY's reservation reads it).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/cycle/events.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::SubmitRunning;

// What running_by_end() must hold: one entry per running job, from running().
std::vector<RunningByEnd> Expected(const ClusterState& state) {
  std::vector<RunningByEnd> want;
  for (const RunningEntry& entry : state.running()) {
    want.push_back(RunningByEnd{.end = entry.job->EstimatedEnd(),
                                .start_seq = entry.start_seq,
                                .slots = entry.job->allocation.TotalSlots()});
  }
  std::sort(want.begin(), want.end());
  return want;
}

void ExpectMirrorsRunning(const ClusterState& state) {
  const std::vector<RunningByEnd> got(state.running_by_end().begin(), state.running_by_end().end());
  const std::vector<RunningByEnd> want = Expected(state);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].end, want[i].end) << i;
    EXPECT_EQ(got[i].start_seq, want[i].start_seq) << i;
    EXPECT_EQ(got[i].slots, want[i].slots) << i;
  }
}

TEST(RunningByEndTest, FollowsStartsEndsRequeuesAndClones) {
  ClusterState state = ClusterBuilder().Hosts(4, 4).State();
  SubmitRunning(state, JobBuilder(1).Tasks(3).Limit(500), 0);
  SubmitRunning(state, JobBuilder(2).Tasks(2).Limit(100), 10);
  SubmitRunning(state, JobBuilder(3).Tasks(1), 20);                       // no limit: never ends
  SubmitRunning(state, JobBuilder(4).Tasks(4).Limit(90).Submit(20), 20);  // ends with 2
  SubmitRunning(state, JobBuilder(5).Tasks(2).Limit(400), 30);
  ExpectMirrorsRunning(state);
  // Ends 110 (2, 4 by start order), 430 (5), 500 (1), never (3).
  std::vector<int64_t> order;
  for (const RunningByEnd& entry : state.running_by_end()) order.push_back(entry.slots);
  EXPECT_EQ(order, (std::vector<int64_t>{2, 4, 2, 3, 1}));

  ASSERT_TRUE(Apply(JobFinished{2}, 60, state).ok());
  ExpectMirrorsRunning(state);
  ASSERT_TRUE(Apply(JobCancelled{5}, 70, state).ok());
  ExpectMirrorsRunning(state);
  ASSERT_TRUE(Apply(JobRequeued{1}, 80, state).ok());
  ExpectMirrorsRunning(state);
  EXPECT_EQ(state.running_by_end().size(), 2u);

  ClusterState copy = state.Clone();
  ExpectMirrorsRunning(copy);
  ASSERT_TRUE(Apply(JobFinished{4}, 90, copy).ok());
  ExpectMirrorsRunning(copy);
  ExpectMirrorsRunning(state);  // the original keeps its own
  EXPECT_EQ(state.running_by_end().size(), 2u);
}

}  // namespace
}  // namespace sluice::core
