// How long the simulator lets a started job run: its trace runtime, or its run limit when
// kill_at_limit cuts an overrunning job there (ending EXIT with cause RUN_LIMIT). The
// replay reads both from a table it builds before the first event, by workload position.
#include <gtest/gtest.h>

#include <optional>

#include "core/model/cluster_state.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace sluice::sim {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

// Three one-slot jobs on three one-slot hosts, all submitted at 5: one within its limit,
// one that overruns it, one without a limit.
Workload ThreeJobs() {
  Workload workload;
  workload.jobs.push_back(WorkloadJob{.spec = JobBuilder(1).Limit(100).Submit(5), .runtime = 50});
  workload.jobs.push_back(WorkloadJob{.spec = JobBuilder(2).Limit(100).Submit(5), .runtime = 500});
  WorkloadJob unlimited{.spec = JobBuilder(3).Submit(5), .runtime = 30};
  unlimited.spec.run_limit = std::nullopt;
  workload.jobs.push_back(unlimited);
  return workload;
}

SimResult Simulate(const Workload& workload, bool kill_at_limit) {
  Result<core::ClusterState> state =
      core::ClusterState::Create(ClusterBuilder().Hosts(3, 1).Config());
  SLUICE_CHECK(state.has_value());
  Simulator simulator(std::move(*state), workload, SimOptions{.kill_at_limit = kill_at_limit});
  Result<SimResult> result = simulator.Run(nullptr);
  SLUICE_CHECK(result.has_value());
  return *std::move(result);
}

TEST(SimulatorRunLengthTest, JobsRunTheirRuntimeWithoutKillAtLimit) {
  const SimResult result = Simulate(ThreeJobs(), /*kill_at_limit=*/false);
  ASSERT_EQ(result.records.size(), 3u);
  EXPECT_EQ(result.records[0].end, 55);
  EXPECT_EQ(result.records[1].end, 505);  // overruns its limit, but nothing cuts it
  EXPECT_EQ(result.records[2].end, 35);
  for (const JobRecord& record : result.records) {
    EXPECT_EQ(record.start, 5);
    EXPECT_EQ(record.state, core::JobState::kDone);
    EXPECT_EQ(record.cause, core::ExitCause::kNone);
  }
}

TEST(SimulatorRunLengthTest, KillAtLimitCutsOnlyTheJobThatOverruns) {
  const SimResult result = Simulate(ThreeJobs(), /*kill_at_limit=*/true);
  ASSERT_EQ(result.records.size(), 3u);
  EXPECT_EQ(result.records[0].end, 55);
  EXPECT_EQ(result.records[0].state, core::JobState::kDone);
  EXPECT_EQ(result.records[1].end, 105);
  EXPECT_EQ(result.records[1].state, core::JobState::kExit);
  EXPECT_EQ(result.records[1].cause, core::ExitCause::kRunLimit);
  EXPECT_EQ(result.records[2].end, 35);  // no limit: nothing to cut at
  EXPECT_EQ(result.records[2].state, core::JobState::kDone);
}

}  // namespace
}  // namespace sluice::sim
