// A host the cluster YAML drops while it runs a job (R-OPS-3, issue 43), on the controller:
// the reload is accepted; the host is closed with a reason of its own (GET /v1/hosts, and
// beside the host in a pending job's per-host reasons) and nothing new starts there; its job
// runs to its end; then the host leaves as one dropped idle does: gone from GET /v1/hosts, its
// agent told so and refused when it registers again. A restart in between keeps the job on it
// and the drain; a reload that lists it again reopens it, unless an administrator closed it.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::LaunchedIds;

const Caller kRoot{.user = "root", .admin = true};
constexpr char kDraining[] = "removed from the configuration; drains";

core::ClusterConfig WithoutH2() {
  core::ClusterConfig config = testing::TestCluster();
  config.hosts.pop_back();
  return config;
}

// Agents add no hosts here: an agent of a host the file dropped is refused.
config::AuthConfig NoDynamicHosts() {
  config::AuthConfig auth = testing::TestAuth();
  auth.allow_dynamic_hosts = false;
  return auth;
}

class HostDrainControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(testing::TestCluster()); }
  void Open(core::ClusterConfig config) {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open(std::move(config), NoDynamicHosts());
  }
  void Restart(core::ClusterConfig config) {
    h_->Close();
    Open(std::move(config));
  }

  // Jobs a_ on h1 and b_ on h2 (4 tasks each, the whole host), both running.
  void RunOnBoth() {
    ASSERT_EQ(h_->Register("h1").status, 200);
    ASSERT_EQ(h_->Register("h2").status, 200);
    a_ = h_->Submit("alice", {{"command", "sleep 60"}, {"tasks", 4}});
    b_ = h_->Submit("alice", {{"command", "sleep 60"}, {"tasks", 4}});
    h_->Cycle();
    ASSERT_EQ(LaunchedIds(h_->Heartbeat("h1")), std::vector<JobId>{a_});
    ASSERT_EQ(LaunchedIds(h_->Heartbeat("h2")), std::vector<JobId>{b_});
    h_->Heartbeat("h1", {a_});
    h_->Heartbeat("h2", {b_});
    ASSERT_EQ(h_->State(b_), "RUNNING");
  }

  json Host(const std::string& name) {
    for (const json& host : Reply(h_->c().Hosts()).body) {
      if (host["name"] == name) return host;
    }
    return json();
  }
  json Verdict(JobId id, const std::string& host) {
    const json job = h_->Job(id);
    for (const json& v : job["reasons"]["hosts"]) {
      if (v["host"] == host) return v;
    }
    return json();
  }
  int HeartbeatStatus(const std::string& host) {
    return Reply(
               h_->c().Heartbeat(
                   host, {{"epoch", h_->c().epoch()}, {"wait_ms", 0}, {"running", json::array()}}))
        .status;
  }
  // The host is out: not listed, its agent told at its next heartbeat and refused after.
  void ExpectGone(const std::string& host) {
    EXPECT_TRUE(Host(host).is_null()) << Host(host).dump();
    const int beat = HeartbeatStatus(host);
    EXPECT_TRUE(beat == 404) << beat;
    Reply again = h_->Register(host);
    EXPECT_EQ(again.status, 403) << again.body.dump();
    EXPECT_NE(again.body.dump().find("not in the cluster configuration"), std::string::npos);
    EXPECT_EQ(Reply(h_->c().HostAction(kRoot, host, "open")).status, 404);
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
  JobId a_ = 0;
  JobId b_ = 0;
};

TEST_F(HostDrainControllerTest, ADroppedBusyHostIsClosedDrainsAndThenLeaves) {
  RunOnBoth();
  Reply reload = h_->c().Reconfigure(WithoutH2());
  ASSERT_EQ(reload.status, 200) << reload.body.dump();
  json h2 = Host("h2");
  EXPECT_EQ(h2["state"], "closed") << h2.dump();
  EXPECT_EQ(h2.value("reason", ""), kDraining);
  EXPECT_EQ(h2["running_jobs"], 1);
  // Nothing new starts there, and a pending job says why.
  const JobId c = h_->Submit("alice", {{"command", "true"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(c), "PENDING");
  const json verdict = Verdict(c, "h2");
  EXPECT_EQ(verdict.value("code", ""), "HOST_CLOSED") << h_->Job(c).dump();
  EXPECT_EQ(verdict.value("reason", ""), kDraining);
  // Its agent's heartbeats go on, and the job is not killed.
  json beat = h_->Heartbeat("h2", {b_});
  EXPECT_TRUE(beat["kill"].empty()) << beat.dump();
  EXPECT_TRUE(beat["launch"].empty()) << beat.dump();
  // The job ends: DONE, and the host leaves.
  json done = h_->Heartbeat("h2", json::array(), Exited(b_, 0));
  EXPECT_EQ(done["ack"], json::array({b_}));
  EXPECT_EQ(h_->State(b_), "DONE");
  ExpectGone("h2");
  h_->Cycle();
  EXPECT_EQ(h_->State(c), "PENDING");  // h1 is still full; h2 is gone
  EXPECT_FALSE(Verdict(c, "h2").is_object());
}

TEST_F(HostDrainControllerTest, AnIdleHostDroppedIsGoneAtOnce) {
  ASSERT_EQ(h_->Register("h1").status, 200);
  ASSERT_EQ(h_->Register("h2").status, 200);
  ASSERT_EQ(Reply(h_->c().Reconfigure(WithoutH2())).status, 200);
  ExpectGone("h2");
  // A restart does the same.
  Restart(WithoutH2());
  ExpectGone("h2");
}

TEST_F(HostDrainControllerTest, ARestartDuringTheDrainKeepsTheJobAndTheDrain) {
  RunOnBoth();
  ASSERT_EQ(Reply(h_->c().Reconfigure(WithoutH2())).status, 200);
  Restart(WithoutH2());  // the file no longer has h2; the store has b_ on it
  ASSERT_EQ(h_->Register("h1", {a_}).status, 200);
  ASSERT_EQ(h_->Register("h2", {b_}).status, 200);
  EXPECT_EQ(h_->State(b_), "RUNNING");
  json h2 = Host("h2");
  EXPECT_EQ(h2["state"], "closed") << h2.dump();
  EXPECT_EQ(h2.value("reason", ""), kDraining);
  EXPECT_EQ(h2["running_jobs"], 1);
  const JobId c = h_->Submit("alice", {{"command", "true"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(c), "PENDING");
  EXPECT_TRUE(LaunchedIds(h_->Heartbeat("h2", {b_})).empty());
  h_->Heartbeat("h2", json::array(), Exited(b_, 0));
  EXPECT_EQ(h_->State(b_), "DONE");
  ExpectGone("h2");
  Restart(WithoutH2());  // drained: a restart does not bring it back
  ExpectGone("h2");
}

TEST_F(HostDrainControllerTest, ListedAgainBeforeItDrainsItReopens) {
  RunOnBoth();
  ASSERT_EQ(Reply(h_->c().Reconfigure(WithoutH2())).status, 200);
  ASSERT_EQ(Reply(h_->c().Reconfigure(testing::TestCluster())).status, 200);
  json h2 = Host("h2");
  EXPECT_EQ(h2["state"], "ok") << h2.dump();
  EXPECT_FALSE(h2.contains("reason")) << h2.dump();
  h_->Heartbeat("h2", json::array(), Exited(b_, 0));
  EXPECT_EQ(Host("h2")["state"], "ok");
  // Listed again, it is not drained by a restart either.
  Restart(testing::TestCluster());
  ASSERT_EQ(h_->Register("h2").status, 200);
  EXPECT_EQ(Host("h2")["state"], "ok");
}

TEST_F(HostDrainControllerTest, AnAdministratorsCloseOutlastsTheDrain) {
  RunOnBoth();
  ASSERT_EQ(Reply(h_->c().Reconfigure(WithoutH2())).status, 200);
  ASSERT_EQ(Reply(h_->c().HostAction(kRoot, "h2", "close")).status, 200);
  // Opening it while it drains does not reopen it.
  const json opened = Reply(h_->c().HostAction(kRoot, "h2", "open")).body;
  EXPECT_EQ(opened["state"], "closed") << opened.dump();
  ASSERT_EQ(Reply(h_->c().HostAction(kRoot, "h2", "close")).status, 200);
  ASSERT_EQ(Reply(h_->c().Reconfigure(testing::TestCluster())).status, 200);
  json h2 = Host("h2");
  EXPECT_EQ(h2["state"], "closed") << h2.dump();
  EXPECT_FALSE(h2.contains("reason")) << h2.dump();  // the administrator's close
}

}  // namespace
}  // namespace sluice::server
