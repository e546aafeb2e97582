// The simulator's side of eligibility (R-SIM-1, R-SIM-4): SWF queue and user numbers mapped
// to q<N>/u<N>, releases of held jobs (JSONL release_at), submissions refused by closed queues
// recorded as rejected, and the SWF UnixStartTime as the wall clock of dispatch windows.
#include <gtest/gtest.h>

#include <string>

#include "core/model/cluster_state.h"
#include "sim/jsonl_reader.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim/swf_reader.h"
#include "testing/builders.h"

namespace sluice::sim {
namespace {

using testing::ClusterBuilder;

// Fields: id submit wait run procs cpu mem req_procs req_time req_mem status user group app
// queue.
constexpr std::string_view kSwf =
    "; MaxProcs: 4\n"
    "; UnixStartTime: 1000\n"
    "1 0 -1 10 1 -1 -1 1 10 -1 1 7 1 1 2 -1 -1 -1\n"
    "2 0 -1 10 1 -1 -1 1 10 -1 1 8 1 1 3 -1 -1 -1\n"
    "3 0 -1 10 1 -1 -1 1 10 -1 1 9\n";

TEST(EligibilitySimTest, SwfQueueNumbersMapToNamedQueuesAndUsersAlwaysMap) {
  Result<Workload> workload = ParseSwf(kSwf, {});
  ASSERT_TRUE(workload.has_value()) << workload.error().message();
  EXPECT_EQ(workload->unix_start_time, 1000);
  ASSERT_EQ(workload->jobs.size(), 3u);
  EXPECT_EQ(workload->jobs[0].swf_queue, 2);
  EXPECT_EQ(workload->jobs[2].swf_queue, -1);  // a 12-field line has no queue
  core::ClusterConfig config = ClusterBuilder()
                                   .Hosts(4, 1)
                                   .Queue(core::QueueSpec{.name = "normal"})
                                   .Queue(core::QueueSpec{.name = "q2"})
                                   .Config();
  MapSwfQueues(config, *workload);
  EXPECT_EQ(workload->jobs[0].spec.queue, "q2");
  EXPECT_EQ(workload->jobs[1].spec.queue, "");  // no q3: the default queue
  EXPECT_EQ(workload->jobs[0].spec.user, "u7");
  EXPECT_EQ(workload->jobs[2].spec.user, "u9");
}

Result<SimResult> RunSim(const core::ClusterConfig& config, const Workload& workload) {
  Result<core::ClusterState> state = core::ClusterState::Create(config);
  SLUICE_CHECK(state.has_value());
  Simulator simulator(std::move(*state), workload, SimOptions{});
  return simulator.Run(nullptr);
}

Workload Jsonl(std::string_view text) {
  Result<Workload> workload = ParseJsonl(text, "w.jsonl", {});
  SLUICE_CHECK(workload.has_value());
  return std::move(workload).value();
}

TEST(EligibilitySimTest, HeldJobsAreReleasedAtReleaseAtAndKeepTheirPlace) {
  Workload workload = Jsonl(
      "{\"id\": 1, \"submit\": 0, \"runtime\": 10, \"hold\": true, \"release_at\": 5}\n"
      "{\"id\": 2, \"submit\": 0, \"runtime\": 10, \"hold\": true}\n"
      "{\"id\": 3, \"submit\": 1, \"runtime\": 10}\n");
  Result<SimResult> result = RunSim(ClusterBuilder().Hosts(1, 1).Config(), workload);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->records[2].start, 1);   // 3 runs while 1 is held
  EXPECT_EQ(result->records[0].start, 11);  // 1 is released at 5 and runs after 3
  EXPECT_EQ(result->records[1].start, -1);  // 2 is never released
}

TEST(EligibilitySimTest, ClosedQueuesRejectSubmissionsWithoutFailingTheRun) {
  core::ClusterConfig config = ClusterBuilder().Hosts(1, 1).Config();
  config.queues.push_back(core::QueueSpec{.name = "shut", .open = false});
  Workload workload = Jsonl(
      "{\"id\": 1, \"submit\": 0, \"runtime\": 10, \"queue\": \"shut\"}\n"
      "{\"id\": 2, \"submit\": 0, \"runtime\": 10, \"depend\": \"ended(1)\"}\n"
      "{\"id\": 3, \"submit\": 0, \"runtime\": 10}\n");
  Result<SimResult> result = RunSim(config, workload);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->rejected, 2);
  EXPECT_TRUE(result->records[0].rejected);
  EXPECT_TRUE(result->records[1].rejected);
  EXPECT_EQ(result->records[2].start, 0);
  ASSERT_EQ(result->warnings.size(), 2u);
  EXPECT_EQ(result->warnings[0],
            "line 1: t=0: rejected: job 1: queue 'shut' is closed to new jobs");
  EXPECT_EQ(result->warnings[1], "line 2: t=0: rejected: job 2: depends on a rejected job");
  Metrics metrics = ComputeMetrics(*result, 1, 0);
  EXPECT_EQ(metrics.rejected, 2);
  EXPECT_EQ(metrics.all.jobs, 1);
}

TEST(EligibilitySimTest, TheEpochOffsetPlacesWindowsOnTheTracesClock) {
  // Time 0 is 01:00 UTC; the window opens at 02:00, one hour into the run.
  core::ClusterConfig config = ClusterBuilder().Hosts(1, 1).Config();
  config.queues[0].windows = {"02:00-03:00"};
  config.epoch_offset = 3600;
  Workload workload = Jsonl("{\"id\": 1, \"submit\": 0, \"runtime\": 10}\n");
  Result<SimResult> result = RunSim(config, workload);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->records[0].start, 3600);
}

TEST(EligibilitySimTest, ARunWithOnlyWindowTimersLeftEnds) {
  // The job needs both slots, one of them on a closed host: each opening of the window wakes
  // the simulator and starts nothing; a week of that ends the run.
  core::ClusterConfig config =
      ClusterBuilder().Hosts(1, 1).Host("h2", 1, core::HostState::kClosed).Config();
  config.queues[0].windows = {"02:00-03:00"};
  Workload workload = Jsonl("{\"id\": 1, \"submit\": 0, \"runtime\": 10, \"tasks\": 2}\n");
  Result<SimResult> result = RunSim(config, workload);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->records[0].start, -1);
  EXPECT_LE(result->cycles, 10);
}

}  // namespace
}  // namespace sluice::sim
