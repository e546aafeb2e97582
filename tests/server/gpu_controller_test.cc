// GPUs through the controller (R-GPU-3, R-UX-2): a job's devices reach its launch (indexes and
// the host's device nodes, for the agent's fence), survive a restart in the stored allocation
// so that a new job avoids them (shared ones with the memory they reserve), and a request no
// host could meet is refused at submission.
#include <gtest/gtest.h>

#include "server/controller.h"
#include "server/controller_fixture.h"
#include "server/http_reply.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::LaunchedIds;

// g1: four devices, 2 and 3 with their own device nodes; h1: no GPUs.
core::ClusterConfig GpuCluster() {
  core::ClusterConfig config = testing::TestCluster();
  core::HostSpec g1{.name = "g1", .slots = 8};
  for (int i = 0; i < 4; ++i) {
    g1.gpus.push_back(core::GpuDevice{.index = i, .model = "A100", .memory_mb = 40960});
  }
  g1.gpus[2].path = "/dev/dri/card2";
  config.hosts.push_back(g1);
  return config;
}

class GpuControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open(GpuCluster());
  }
  void Restart() {
    h_->Close();
    h_->Open(GpuCluster());
  }
  // The launch of job `id` sent to g1's agent.
  json LaunchOn(const std::string& host, JobId id) {
    json hb = h_->Heartbeat(host);
    for (const json& launch : hb["launch"]) {
      if (launch["job"] == id) return launch;
    }
    return json();
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
};

TEST_F(GpuControllerTest, TheLaunchCarriesTheJobsDevicesAndTheHostsDeviceNodes) {
  ASSERT_EQ(h_->Register("g1", json::array(), 8).status, 200);
  const JobId id = h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=2]"}});
  h_->Cycle();
  ASSERT_EQ(h_->State(id), "ADMITTING");
  const json launch = LaunchOn("g1", id);
  ASSERT_TRUE(launch.is_object());
  EXPECT_EQ(launch["gpus"], json::array({0, 1}));
  EXPECT_EQ(launch["gpu_paths"], json({{"0", "/dev/nvidia0"},
                                       {"1", "/dev/nvidia1"},
                                       {"2", "/dev/dri/card2"},
                                       {"3", "/dev/nvidia3"}}));
  // The stored allocation lists them per host, next to the gpu count.
  const json job = h_->Job(id);
  ASSERT_EQ(job["hosts"].size(), 1u);
}

TEST_F(GpuControllerTest, ARestartKeepsTheDevicesOfAStartedJobAndANewJobAvoidsThem) {
  ASSERT_EQ(h_->Register("g1", json::array(), 8).status, 200);
  const JobId first = h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=3]"}});
  h_->Cycle();
  ASSERT_EQ(LaunchOn("g1", first)["gpus"], json::array({0, 1, 2}));
  h_->Heartbeat("g1", {first});
  ASSERT_EQ(h_->State(first), "RUNNING");
  Restart();
  ASSERT_EQ(h_->Register("g1", json::array({first}), 8).status, 200);
  const JobId second = h_->Submit("alice", {{"command", "y"}, {"resreq", "gpu[num=1]"}});
  const JobId third = h_->Submit("alice", {{"command", "z"}, {"resreq", "gpu[num=1]"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(first), "RUNNING");
  ASSERT_EQ(h_->State(second), "ADMITTING");
  EXPECT_EQ(LaunchOn("g1", second)["gpus"], json::array({3}));
  EXPECT_EQ(h_->State(third), "PENDING");  // all four are held
}

TEST_F(GpuControllerTest, ARequestNoHostCouldMeetIsRefusedAtSubmission) {
  for (const char* resreq : {"gpu[num=1:gmodel=H100]", "gpu[num=8]", "gpu[num=2:glink=yes]"}) {
    SCOPED_TRACE(resreq);
    Reply refused = h_->c().Submit(Caller{.user = "alice"}, {{"command", "x"}, {"resreq", resreq}});
    EXPECT_EQ(refused.status, 422) << refused.body.dump();
  }
  Reply refused = h_->c().Submit(Caller{.user = "alice"},
                                 {{"command", "x"}, {"resreq", "gpu[num=1:gmodel=H100]"}});
  EXPECT_NE(refused.body.dump().find("gmodel=H100"), std::string::npos) << refused.body.dump();
  Reply accepted = h_->c().Submit(Caller{.user = "alice"},
                                  {{"command", "x"}, {"resreq", "gpu[num=4:gmodel=A100]"}});
  EXPECT_EQ(accepted.status, 200) << accepted.body.dump();
}

TEST_F(GpuControllerTest, MetricsCountGpusInUseAndTheirFragmentation) {
  ASSERT_EQ(h_->Register("g1", json::array(), 8).status, 200);
  h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=1]"}});
  h_->Cycle();
  const std::string m = h_->c().Metrics();
  EXPECT_NE(m.find("\nsluice_gpus{state=\"total\"} 4"), std::string::npos) << m;
  EXPECT_NE(m.find("\nsluice_gpus{state=\"used\"} 1"), std::string::npos) << m;
  EXPECT_NE(m.find("\nsluice_host_gpus{host=\"g1\",model=\"A100\",state=\"used\"} 1"),
            std::string::npos)
      << m;
  // The 3 free GPUs are all on the partly used g1.
  EXPECT_NE(m.find("\nsluice_gpu_fragmentation 1"), std::string::npos) << m;
  EXPECT_NE(m.find("sluice_host_resources{host=\"g1\",resource=\"gpu\",state=\"used\"} 1"),
            std::string::npos)
      << m;
}

TEST_F(GpuControllerTest, HostsListTheirGpusAndWhichAreInUse) {
  ASSERT_EQ(h_->Register("g1", json::array(), 8).status, 200);
  h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=1]"}});
  h_->Cycle();
  const json hosts = Reply(h_->c().Hosts()).body;
  const json* g1 = nullptr;
  for (const json& host : hosts) {
    if (host["name"] == "g1") g1 = &host;
    if (host["name"] == "h1") {
      EXPECT_FALSE(host.contains("gpus")) << host.dump();
    }
  }
  ASSERT_NE(g1, nullptr) << hosts.dump();
  ASSERT_EQ((*g1)["gpus"].size(), 4u) << g1->dump();
  EXPECT_EQ((*g1)["gpus"][0]["in_use"], true);
  EXPECT_EQ((*g1)["gpus"][1]["in_use"], false);
  EXPECT_EQ((*g1)["gpus"][1]["model"], "A100");
  EXPECT_EQ((*g1)["used_resources"]["gpu"], 1);
}

TEST_F(GpuControllerTest, HistoryShowsTheGpusAJobHeldAndItsGpuSeconds) {
  ASSERT_EQ(h_->Register("g1", json::array(), 8).status, 200);
  const JobId id = h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=2]"}});
  h_->Cycle();
  ASSERT_TRUE(LaunchOn("g1", id).is_object());
  h_->Heartbeat("g1", {id});
  h_->Advance(10'000);
  h_->Heartbeat("g1", json::array(), testing::Exited(id, 0));
  h_->c().FlushStore();
  Reply history = h_->c().History({});
  ASSERT_EQ(history.status, 200);
  const json page = history.Json();
  ASSERT_EQ(page["jobs"].size(), 1u) << page.dump();
  EXPECT_EQ(page["jobs"][0]["gpus"], 2);
  EXPECT_EQ(page["jobs"][0]["gpu_seconds"], 20);
  Reply summary = h_->c().HistorySummary({});
  ASSERT_EQ(summary.status, 200) << summary.Json().dump();
  EXPECT_NEAR(summary.Json()["total"]["gpu_hours"].get<double>(), 20.0 / 3600, 1e-9)
      << summary.Json().dump();
}

TEST_F(GpuControllerTest, SharedJobsShareADeviceAndKeepTheirMemoryThroughARestart) {
  ASSERT_EQ(h_->Register("g1", json::array(), 8).status, 200);
  const json shared = {{"command", "x"}, {"resreq", "gpu[num=1:mode=shared:gmem=20G]"}};
  const JobId first = h_->Submit("alice", shared);
  const JobId second = h_->Submit("bob", shared);
  h_->Cycle();
  const json launches = h_->Heartbeat("g1")["launch"];  // both, in one reply
  ASSERT_EQ(launches.size(), 2u) << launches.dump();
  for (const json& launch : launches) {
    EXPECT_EQ(launch["gpus"], json::array({0}));  // 20 + 20 of 40 GB
    EXPECT_EQ(launch["gpu_mem_mb"], 20480);       // the agent tells the job its share
  }
  h_->Heartbeat("g1", {first, second});
  ASSERT_EQ(h_->State(first), "RUNNING");
  ASSERT_EQ(h_->State(second), "RUNNING");
  Restart();
  ASSERT_EQ(h_->Register("g1", json::array({first, second}), 8).status, 200);
  // Device 0 is full: a third shared job takes device 1; a whole one avoids both.
  const JobId third = h_->Submit("carol", shared);
  const JobId whole = h_->Submit("carol", {{"command", "y"}, {"resreq", "gpu[num=3]"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(first), "RUNNING");
  EXPECT_EQ(h_->State(second), "RUNNING");
  ASSERT_EQ(h_->State(third), "ADMITTING");
  EXPECT_EQ(LaunchOn("g1", third)["gpus"], json::array({1}));
  EXPECT_EQ(h_->State(whole), "PENDING");  // two devices are whole, not three
  const json hosts = Reply(h_->c().Hosts()).body;
  for (const json& host : hosts) {
    if (host["name"] != "g1") continue;
    EXPECT_EQ(host["gpus"][0]["in_use"], true);
    EXPECT_EQ(host["gpus"][0]["shared_mem_mb"], 40960);
    EXPECT_EQ(host["gpus"][1]["shared_mem_mb"], 20480);
    EXPECT_TRUE(host["gpus"][2]["shared_mem_mb"].is_null());
  }
}

}  // namespace
}  // namespace sluice::server
