// GpuUsage integrates held and stranded devices exactly, refuses a device held twice, and the
// GPU metrics (sim/metrics.h) follow from its totals; outputs without GPUs do not change.
#include "sim/gpu_usage.h"

#include <gtest/gtest.h>

#include <string>

#include "core/model/cluster_state.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace sluice::sim {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;

core::HostSpec GpuHost(std::string name, int64_t gpus) {
  core::HostSpec host;
  host.name = std::move(name);
  host.slots = 8;
  if (gpus > 0) host.resources["gpu"] = gpus;
  return host;
}

// Two hosts of four devices (0-3), known by index only.
core::ClusterState TwoGpuHosts() {
  return ClusterBuilder().Host(GpuHost("g1", 4)).Host(GpuHost("g2", 4)).State();
}

core::Allocation Devices(HostIndex host, uint64_t gpus) {
  return core::Allocation{.hosts = {core::HostGrant{.host = host, .slots = 1, .gpus = gpus}}};
}

TEST(GpuUsageTest, IntegratesHeldAndStrandedDevices) {
  const core::ClusterState state = TwoGpuHosts();
  GpuUsage usage(state.topology());
  usage.Hold(0, Devices(0, 0b0001));      // [0, 10): 1 held; g1's other 3 stranded
  usage.Hold(10, Devices(1, 0b1111));     // [10, 30): 5 held; g2 whole, so still 3 stranded
  usage.Release(30, Devices(0, 0b0001));  // [30, 40): 4 held; g1 wholly free: none stranded
  usage.Release(40, Devices(1, 0b1111));
  EXPECT_EQ(usage.totals().devices, 8);
  EXPECT_EQ(usage.totals().held_seconds, 1 * 10 + 5 * 20 + 4 * 10);
  EXPECT_EQ(usage.totals().stranded_seconds, 3 * 10 + 3 * 20);
}

TEST(GpuUsageTest, AClusterWithoutGpusCountsNothing) {
  const core::ClusterState state = ClusterBuilder().Host(GpuHost("c1", 0)).State();
  GpuUsage usage(state.topology());
  usage.Hold(0, core::Allocation{.hosts = {core::HostGrant{.host = 0, .slots = 4}}});
  usage.Release(50, core::Allocation{.hosts = {core::HostGrant{.host = 0, .slots = 4}}});
  EXPECT_EQ(usage.totals().devices, 0);
  EXPECT_EQ(usage.totals().held_seconds, 0);
  EXPECT_EQ(usage.totals().stranded_seconds, 0);
}

TEST(GpuUsageDeathTest, ADeviceHeldTwiceIsABug) {
  const core::ClusterState state = TwoGpuHosts();
  GpuUsage usage(state.topology());
  usage.Hold(0, Devices(0, 0b0011));
  EXPECT_DEATH(usage.Hold(5, Devices(0, 0b0110)), "");
  EXPECT_DEATH(usage.Release(5, Devices(0, 0b0100)), "");  // never held
  EXPECT_DEATH(usage.Hold(5, Devices(1, 0b1'0000)), "");   // g2 has no device 4
}

// The example of docs/workload-format.md: one 1-GPU job for the whole 100 s makespan.
Metrics RunOneGpuJob(core::ClusterState state, const std::string& resreq) {
  Workload workload;
  workload.jobs.push_back(
      WorkloadJob{.spec = JobBuilder(1).ResReq(resreq), .runtime = 100, .line = 1});
  Simulator simulator(std::move(state), workload, SimOptions{});
  Result<SimResult> result = simulator.Run(nullptr);
  SLUICE_CHECK(result.has_value());
  return ComputeMetrics(*result, simulator.state().topology().total_slots(), 0);
}

TEST(GpuMetricsTest, UtilizationAndFragmentationOverTheMakespan) {
  const Metrics m = RunOneGpuJob(TwoGpuHosts(), "gpu[num=1]");
  EXPECT_EQ(m.makespan, 100);
  EXPECT_EQ(m.total_gpus, 8);
  EXPECT_EQ(m.gpu_seconds, 100);
  EXPECT_DOUBLE_EQ(m.gpu_utilization, 100.0 / 800);
  EXPECT_DOUBLE_EQ(m.gpu_fragmentation, 300.0 / 700);  // g1's 3 free devices, all along
  const std::string json = MetricsToJson(m);
  for (const char* key : {"total_gpus", "gpu_seconds", "gpu_utilization", "gpu_fragmentation"}) {
    EXPECT_NE(json.find(std::string("\"") + key + "\":"), std::string::npos) << key;
  }
  EXPECT_NE(MetricsToTable(m, "t").find("GPU utilization"), std::string::npos);
}

TEST(GpuMetricsTest, AWholeHostJobStrandsNothing) {
  const Metrics m = RunOneGpuJob(TwoGpuHosts(), "gpu[num=4]");
  EXPECT_EQ(m.gpu_seconds, 400);
  EXPECT_DOUBLE_EQ(m.gpu_utilization, 0.5);
  EXPECT_DOUBLE_EQ(m.gpu_fragmentation, 0);
}

TEST(GpuMetricsTest, WithoutGpusTheOutputsHaveNoGpuFigures) {
  const Metrics m = RunOneGpuJob(ClusterBuilder().Host(GpuHost("c1", 0)).State(), "");
  EXPECT_EQ(m.total_gpus, 0);
  EXPECT_EQ(MetricsToJson(m).find("gpu"), std::string::npos);
  EXPECT_EQ(MetricsToTable(m, "t").find("GPU"), std::string::npos);
}

}  // namespace
}  // namespace sluice::sim
