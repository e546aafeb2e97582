// The simulator finds each job's record by id whether the workload numbers its jobs
// compactly (a dense table) or sparsely (a hash map), and refuses a repeated id either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "core/model/cluster_state.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace sluice::sim {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

// One-slot jobs on one one-slot host, submitted at 0 in id order: job k (0-based) runs
// from 10k to 10(k+1).
Workload Serial(const std::vector<JobId>& ids) {
  Workload workload;
  for (size_t i = 0; i < ids.size(); ++i) {
    workload.jobs.push_back(WorkloadJob{
        .spec = JobBuilder(ids[i]).Limit(10), .runtime = 10, .line = static_cast<int64_t>(i + 1)});
  }
  return workload;
}

Result<SimResult> Simulate(const Workload& workload) {
  Result<core::ClusterState> state =
      core::ClusterState::Create(ClusterBuilder().Hosts(1, 1).Config());
  SLUICE_CHECK(state.has_value());
  Simulator simulator(std::move(*state), workload, SimOptions{});
  return simulator.Run(nullptr);
}

TEST(SimulatorIdsTest, RecordsFollowTheirJobsWithCompactAndSparseIds) {
  const std::vector<std::vector<JobId>> cases = {
      {3, 1, 2},                   // compact: a dense table
      {7, 1'000'000'000'000, -5},  // sparse: a hash map
      {std::numeric_limits<JobId>::min() + 1, std::numeric_limits<JobId>::max()},  // no overflow
  };
  for (const std::vector<JobId>& ids : cases) {
    SCOPED_TRACE(ids.front());
    std::vector<JobId> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    Result<SimResult> result = Simulate(Serial(ids));
    ASSERT_TRUE(result.has_value()) << result.error().ToString();
    ASSERT_EQ(result->records.size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const JobRecord& record = result->records[i];  // in workload order
      EXPECT_EQ(record.id, ids[i]);
      // Same submit time: the simulator submits (and the FIFO queue starts) by id.
      const auto rank =
          static_cast<Instant>(std::find(sorted.begin(), sorted.end(), ids[i]) - sorted.begin());
      EXPECT_EQ(record.start, 10 * rank);
      EXPECT_EQ(record.end, 10 * rank + 10);
      EXPECT_EQ(record.state, core::JobState::kDone);
    }
  }
}

TEST(SimulatorIdsTest, RepeatedIdIsRefusedWithItsLine) {
  for (const std::vector<JobId>& ids :
       {std::vector<JobId>{1, 2, 1}, std::vector<JobId>{1, 1'000'000'000'000, 1}}) {
    Result<SimResult> result = Simulate(Serial(ids));
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().message(), "line 3: job id 1 appears twice");
  }
}

}  // namespace
}  // namespace sluice::sim
