// The GPUs an agent detected, at registration (R-GPU-1; AgentRegistry::ApplyDetectedGpus): the
// detection runs for real (agent::DetectGpus) against a fake nvidia-smi first on the search
// path. A host configured with four GPUs whose agent finds two, or none, is closed with the
// reason GET /v1/hosts shows; a `gpus: auto` host takes the devices (its `gpu` count, and jobs
// that need NVLink go there); a host configured without GPUs is never closed over them; an
// agent that did not look (an older one) changes nothing.
#include <gtest/gtest.h>

#include "agent/fake_nvidia_smi.h"
#include "agent/gpu_detect.h"
#include "server/controller_fixture.h"
#include "wire/agent_protocol.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::LaunchedIds;

// h1, h2 (no GPUs, TestCluster's); g4: four A100s by list; c4: four GPUs by count only;
// auto1: `gpus: auto`.
core::ClusterConfig DetectCluster() {
  core::ClusterConfig config = testing::TestCluster();
  core::HostSpec g4{.name = "g4", .slots = 8};
  for (int32_t i = 0; i < 4; ++i) g4.gpus.push_back({.index = i, .model = "A100"});
  config.hosts.push_back(g4);
  config.hosts.push_back({.name = "c4", .slots = 8, .resources = {{"gpu", 4}}});
  config.hosts.push_back({.name = "auto1", .slots = 8, .gpus_auto = true});
  return config;
}

class GpuDetectRegisterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open(DetectCluster());
  }

  // What the agent's detection reports with the fake nvidia-smi (two NVLinked A100s unless
  // the test wrote another), or with none on the path.
  wire::GpuReport Detect(bool with_nvidia_smi = true) {
    if (with_nvidia_smi && !std::filesystem::exists(smi_.path() / "nvidia-smi")) {
      sluice::testing::WriteFakeNvidiaSmi(smi_.path(), sluice::testing::kTwoA100Query,
                                          sluice::testing::kTwoA100Topo);
    }
    const std::string path =
        with_nvidia_smi ? sluice::testing::PathWithFirst(smi_.path()) : empty_.path().string();
    return agent::GpuReportOf(agent::DetectGpus({.search_path = path}));
  }

  Reply Register(const std::string& host, std::optional<wire::GpuReport> gpus,
                 std::set<int64_t> running = {}) {
    return h_->c().Register(wire::EncodeRegister({.host = {.name = host, .slots = 8},
                                                  .running = std::move(running),
                                                  .gpus = std::move(gpus)}));
  }

  // Runs a job taking both detected GPUs on `host`, the only registered host (its agent
  // reports the job running).
  JobId RunOnBothGpus(const std::string& host) {
    const JobId id = h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=2:glink=yes]"}});
    h_->Cycle();
    EXPECT_EQ(LaunchedIds(h_->Heartbeat(host)), std::vector<JobId>({id}));
    h_->Heartbeat(host, json::array({id}));
    EXPECT_EQ(h_->State(id), "RUNNING");
    return id;
  }

  // A controller restart (as after a crash): the store's state, the same YAML.
  void Restart() {
    h_->Close();
    h_->Open(DetectCluster());
  }

  json Host(const std::string& name) {
    for (const json& host : Reply(h_->c().Hosts()).body) {
      if (host["name"] == name) return host;
    }
    return json();
  }

  TempDir dir_;
  TempDir smi_;    // the fake nvidia-smi
  TempDir empty_;  // a search path without one
  std::unique_ptr<ControllerHarness> h_;
};

TEST_F(GpuDetectRegisterTest, TwoDetectedWhereFourAreConfiguredClosesTheHost) {
  ASSERT_EQ(Register("g4", Detect()).status, 200);
  const json host = Host("g4");
  EXPECT_EQ(host["state"], "closed") << host.dump();
  EXPECT_EQ(host.value("reason", ""), "GPUs: configured 4, detected 2 (nvidia-smi)");
  // Nothing is sent to it meanwhile.
  const JobId id = h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=1]"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(id), "PENDING");
}

TEST_F(GpuDetectRegisterTest, NoNvidiaSmiWhereGpusAreConfiguredClosesTheHost) {
  ASSERT_EQ(Register("c4", Detect(/*with_nvidia_smi=*/false)).status, 200);
  const json host = Host("c4");
  EXPECT_EQ(host["state"], "closed") << host.dump();
  EXPECT_EQ(host.value("reason", ""), "GPUs: configured 4, detected none (no nvidia-smi)");
}

TEST_F(GpuDetectRegisterTest, ANvidiaSmiThatHangsClosesTheHostWithTheCause) {
  sluice::testing::WriteFakeNvidiaSmiScript(smi_.path(), "exec sleep 60");
  const wire::GpuReport report = agent::GpuReportOf(
      agent::DetectGpus({.search_path = sluice::testing::PathWithFirst(smi_.path()),
                         .timeout = std::chrono::milliseconds(300)}));
  ASSERT_EQ(report.probe, wire::GpuProbe::kFailed);
  ASSERT_EQ(Register("g4", report).status, 200);
  const json host = Host("g4");
  EXPECT_EQ(host["state"], "closed") << host.dump();
  EXPECT_EQ(
      host.value("reason", "").rfind("GPUs: configured 4, detected none (nvidia-smi failed:", 0),
      0u)
      << host.dump();
}

TEST_F(GpuDetectRegisterTest, AnotherModelThanConfiguredClosesTheHost) {
  sluice::testing::WriteFakeNvidiaSmi(
      smi_.path(),
      "0, GPU-1, Tesla V100-SXM2-16GB, 16160\n1, GPU-2, Tesla V100-SXM2-16GB, 16160\n"
      "2, GPU-3, Tesla V100-SXM2-16GB, 16160\n3, GPU-4, Tesla V100-SXM2-16GB, 16160\n",
      "");
  ASSERT_EQ(Register("g4", Detect()).status, 200);
  EXPECT_EQ(Host("g4").value("reason", ""),
            "GPUs: configured A100 at index 0, detected V100 (nvidia-smi)");
}

TEST_F(GpuDetectRegisterTest, DetectionThatAgreesLeavesTheHostOpen) {
  sluice::testing::WriteFakeNvidiaSmi(
      smi_.path(),
      "0, GPU-1, NVIDIA A100-SXM4-80GB, 81920\n1, GPU-2, NVIDIA A100-SXM4-80GB, 81920\n"
      "2, GPU-3, NVIDIA A100-SXM4-80GB, 81920\n3, GPU-4, NVIDIA A100-SXM4-80GB, 81920\n",
      "");
  ASSERT_EQ(Register("g4", Detect()).status, 200);
  ASSERT_EQ(Register("c4", Detect()).status, 200);  // count only: the count agrees
  for (const char* name : {"g4", "c4"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(Host(name)["state"], "ok");
    EXPECT_FALSE(Host(name).contains("reason"));
  }
}

TEST_F(GpuDetectRegisterTest, AnAutoHostTakesTheDetectedDevices) {
  ASSERT_EQ(Register("auto1", Detect()).status, 200);
  const json host = Host("auto1");
  EXPECT_EQ(host["state"], "ok") << host.dump();
  EXPECT_EQ(host["resources"]["gpu"], 2) << host.dump();
  // Their model and NVLink came too: a job that needs both runs there.
  const JobId id =
      h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=2:gmodel=A100:glink=yes]"}});
  h_->Cycle();
  EXPECT_EQ(LaunchedIds(h_->Heartbeat("auto1")), std::vector<JobId>({id}));
  // Registering again with the same devices changes nothing.
  ASSERT_EQ(Register("auto1", Detect()).status, 200);
  EXPECT_EQ(Host("auto1")["resources"]["gpu"], 2);
}

// A queue action rebuilds the configuration from the file, which lists no devices for an
// auto host: the ones its agent reported stay.
TEST_F(GpuDetectRegisterTest, AnAutoHostKeepsItsDevicesThroughAQueueAction) {
  ASSERT_EQ(Register("auto1", Detect()).status, 200);
  ASSERT_EQ(Reply(h_->c().QueueAction(Caller{.user = "root", .admin = true}, "bf", "close")).status,
            200);
  EXPECT_EQ(Host("auto1")["resources"]["gpu"], 2) << Host("auto1").dump();
}

TEST_F(GpuDetectRegisterTest, AnAutoHostWithoutNvidiaSmiHasNoGpusAndStaysOpen) {
  ASSERT_EQ(Register("auto1", Detect(/*with_nvidia_smi=*/false)).status, 200);
  const json host = Host("auto1");
  EXPECT_EQ(host["state"], "ok") << host.dump();
  EXPECT_FALSE(host["resources"].contains("gpu")) << host.dump();
}

TEST_F(GpuDetectRegisterTest, AHostConfiguredWithoutGpusIsNeverClosedOverThem) {
  ASSERT_EQ(Register("h1", Detect()).status, 200);
  EXPECT_EQ(Host("h1")["state"], "ok");
  ASSERT_EQ(Register("h2", wire::GpuReport{.probe = wire::GpuProbe::kFailed, .error = "x"}).status,
            200);
  EXPECT_EQ(Host("h2")["state"], "ok");
  EXPECT_FALSE(Host("h1")["resources"].contains("gpu"));  // not taken either
}

TEST_F(GpuDetectRegisterTest, AnAgentThatDidNotLookChangesNothing) {
  ASSERT_EQ(Register("g4", std::nullopt).status, 200);
  ASSERT_EQ(Register("auto1", std::nullopt).status, 200);
  EXPECT_EQ(Host("g4")["state"], "ok");
  EXPECT_EQ(Host("g4")["resources"]["gpu"], 4);
  EXPECT_EQ(Host("auto1")["state"], "ok");
}

// Opened by an administrator, the host is closed again at the agent's next registration
// while the mismatch lasts: the configuration (or the host) has to be put right.
TEST_F(GpuDetectRegisterTest, OpenedByAnAdministratorItIsClosedAgainAtTheNextRegistration) {
  ASSERT_EQ(Register("g4", Detect()).status, 200);
  ASSERT_EQ(Reply(h_->c().HostAction(Caller{.user = "root", .admin = true}, "g4", "open")).status,
            200);
  EXPECT_EQ(Host("g4")["state"], "ok");
  ASSERT_EQ(Register("g4", Detect()).status, 200);
  EXPECT_EQ(Host("g4")["state"], "closed");
  EXPECT_EQ(Host("g4").value("reason", ""), "GPUs: configured 4, detected 2 (nvidia-smi)");
}

// A host its agent adds (auth.allow_dynamic_hosts) is as the agent describes it, GPUs too.
TEST_F(GpuDetectRegisterTest, AHostAddedByItsAgentHasTheDetectedGpus) {
  ASSERT_EQ(Register("x9", Detect()).status, 200);
  const json host = Host("x9");
  EXPECT_EQ(host["state"], "ok") << host.dump();
  EXPECT_EQ(host["resources"]["gpu"], 2);
}

// The devices an agent detected are stored: after a controller restart the job holding them
// is restored on them (it was killed for want of them), and they are not handed out again
// before the agent registers.
TEST_F(GpuDetectRegisterTest, AnAutoHostsDevicesAndItsGpuJobSurviveARestart) {
  ASSERT_EQ(Register("auto1", Detect()).status, 200);
  const JobId id = RunOnBothGpus("auto1");
  Restart();
  EXPECT_EQ(h_->State(id), "RUNNING") << h_->log();
  EXPECT_EQ(Host("auto1")["resources"]["gpu"], 2) << Host("auto1").dump();
  ASSERT_EQ(Register("auto1", Detect(), {id}).status, 200);
  EXPECT_EQ(h_->State(id), "RUNNING");
  const JobId next = h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=1:gmodel=A100]"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(next), "PENDING");  // both A100s are still the first job's
}

TEST_F(GpuDetectRegisterTest, AnAgentAddedHostsDevicesAndItsGpuJobSurviveARestart) {
  ASSERT_EQ(Register("x9", Detect()).status, 200);
  const JobId id = RunOnBothGpus("x9");
  Restart();
  EXPECT_EQ(h_->State(id), "RUNNING") << h_->Job(id).dump();
  EXPECT_EQ(Host("x9")["resources"]["gpu"], 2) << Host("x9").dump();
  ASSERT_EQ(Register("x9", Detect(), {id}).status, 200);
  h_->Heartbeat("x9", json::array({id}), testing::Exited(id));
  EXPECT_EQ(h_->State(id), "DONE");
  // Their model and NVLink came back too: a job that needs both runs there again.
  const JobId next =
      h_->Submit("alice", {{"command", "x"}, {"resreq", "gpu[num=2:gmodel=A100:glink=yes]"}});
  h_->Cycle();
  EXPECT_EQ(LaunchedIds(h_->Heartbeat("x9")), std::vector<JobId>({next}));
}

// A host its agent added with GPUs, whose agent then finds none (nvidia-smi failed): it has
// none, and still after a restart (its devices still come from its agent: not closed).
TEST_F(GpuDetectRegisterTest, AnAgentAddedHostWhoseGpusAreGoneHasNoneThroughARestart) {
  ASSERT_EQ(Register("x9", Detect()).status, 200);
  ASSERT_EQ(Host("x9")["resources"]["gpu"], 2);
  ASSERT_EQ(Register("x9", wire::GpuReport{.probe = wire::GpuProbe::kFailed, .error = "x"}).status,
            200);
  EXPECT_FALSE(Host("x9")["resources"].contains("gpu")) << Host("x9").dump();
  Restart();
  ASSERT_EQ(Register("x9", wire::GpuReport{.probe = wire::GpuProbe::kFailed, .error = "x"}).status,
            200);
  EXPECT_EQ(Host("x9")["state"], "ok") << Host("x9").dump();
  EXPECT_FALSE(Host("x9")["resources"].contains("gpu")) << Host("x9").dump();
  // Detected again, they are back.
  ASSERT_EQ(Register("x9", Detect()).status, 200);
  EXPECT_EQ(Host("x9")["resources"]["gpu"], 2);
}

}  // namespace
}  // namespace sluice::server
