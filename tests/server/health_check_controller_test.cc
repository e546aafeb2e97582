// Health checks on the controller (R-OPS-4; AgentRegistry::ApplyHealth, ClusterSettings):
// the controller tells each agent its host's check (at registration and in heartbeat replies);
// a failed report closes the host with its message (GET /v1/hosts, and beside the host in a
// pending job's per-host reasons) and keeps new work off it while its running jobs go on; a
// pass reopens it; the checker's close and an administrator's are separate, so a pass never
// reopens a host an administrator closed and an administrator's open does not lift a failing
// check; after a restart the agent's registration carries its last result.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"
#include "wire/agent_protocol.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::LaunchedIds;

const core::HealthCheck kCheck{.program = "/usr/sbin/nhc", .interval = 60, .timeout = 30};
const Caller kRoot{.user = "root", .admin = true};

// TestCluster's h1 and h2; every host runs kCheck but h2, which has none.
config::AuthConfig HealthAuth() {
  config::AuthConfig auth = testing::TestAuth();
  auth.health.all = kCheck;
  auth.health.hosts["h2"] = std::nullopt;
  return auth;
}

json Failed(const std::string& message) { return {{"ok", false}, {"message", message}}; }
json Passed() { return {{"ok", true}, {"message", ""}}; }

class HealthCheckControllerTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open(testing::TestCluster(), HealthAuth());
  }

  Reply Register(const std::string& host, std::optional<json> health = std::nullopt) {
    json body = {{"name", host}, {"slots", 4}, {"running", json::array()}, {"epoch", 0}};
    if (health) body["health"] = *health;
    return h_->c().Register(body);
  }
  json Heartbeat(const std::string& host, const json& health, json running = json::array()) {
    Reply r = h_->c().Heartbeat(
        host,
        {{"epoch", h_->c().epoch()}, {"wait_ms", 0}, {"running", running}, {"health", health}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body;
  }
  json Host(const std::string& name) {
    for (const json& host : Reply(h_->c().Hosts()).body) {
      if (host["name"] == name) return host;
    }
    return json();
  }
  // The per-host verdict of a pending job for `host`.
  json Verdict(JobId id, const std::string& host) {
    const json job = h_->Job(id);  // kept: the loop must not walk a temporary
    for (const json& v : job["reasons"]["hosts"]) {
      if (v["host"] == host) return v;
    }
    return json();
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
};

TEST_F(HealthCheckControllerTest, AgentsAreToldTheirHostsCheckAtRegistrationAndInHeartbeats) {
  Result<wire::RegisterReply> reply = wire::DecodeRegisterReply(Register("h1").body);
  ASSERT_TRUE(reply) << reply.error().ToString();
  EXPECT_EQ(reply->health_check, kCheck);
  Result<wire::HeartbeatReply> beat = wire::DecodeHeartbeatReply(h_->Heartbeat("h1"));
  ASSERT_TRUE(beat) << beat.error().ToString();
  EXPECT_EQ(beat->health_check, std::optional<std::optional<core::HealthCheck>>(kCheck));
  // h2 has none: told so (null), not left with whatever it had.
  ASSERT_EQ(Register("h2").status, 200);
  beat = wire::DecodeHeartbeatReply(h_->Heartbeat("h2"));
  ASSERT_TRUE(beat) << beat.error().ToString();
  ASSERT_TRUE(beat->health_check.has_value());
  EXPECT_EQ(*beat->health_check, std::nullopt);
}

TEST_F(HealthCheckControllerTest, AFailureClosesTheHostWithItsMessageAndAPassReopensIt) {
  ASSERT_EQ(Register("h1", Passed()).status, 200);
  EXPECT_EQ(Host("h1")["state"], "ok");
  const std::string nhc = "ERROR: nhc: Health check failed: check_fs_mount: /home not mounted";
  Heartbeat("h1", Failed(nhc));
  json host = Host("h1");
  EXPECT_EQ(host["state"], "closed") << host.dump();
  EXPECT_EQ(host.value("reason", ""), "health check: " + nhc);
  EXPECT_EQ(host.value("health_failure", ""), nhc);

  const JobId id = h_->Submit("alice", {{"command", "x"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(id), "PENDING");
  const json verdict = Verdict(id, "h1");
  ASSERT_TRUE(verdict.is_object()) << h_->Job(id).dump();
  EXPECT_EQ(verdict.value("code", ""), "HOST_CLOSED") << verdict.dump();
  EXPECT_EQ(verdict.value("reason", ""), "health check: " + nhc);

  Heartbeat("h1", Passed());
  EXPECT_EQ(Host("h1")["state"], "ok");
  EXPECT_FALSE(Host("h1").contains("reason"));
  h_->Cycle();
  EXPECT_EQ(LaunchedIds(h_->Heartbeat("h1")), std::vector<JobId>({id}));
}

TEST_F(HealthCheckControllerTest, RunningJobsKeepRunningOnAHostThatFails) {
  ASSERT_EQ(Register("h1", Passed()).status, 200);
  const JobId id = h_->Submit("alice", {{"command", "x"}});
  h_->Cycle();
  ASSERT_EQ(LaunchedIds(h_->Heartbeat("h1")), std::vector<JobId>({id}));
  h_->Heartbeat("h1", json::array({id}));
  const json reply = Heartbeat("h1", Failed("ERROR: bad"), json::array({id}));
  EXPECT_TRUE(reply["kill"].empty()) << reply.dump();
  h_->Cycle();
  EXPECT_EQ(h_->State(id), "RUNNING");
  EXPECT_EQ(Host("h1")["state"], "closed");
}

TEST_F(HealthCheckControllerTest, APassNeverReopensAHostAnAdministratorClosed) {
  ASSERT_EQ(Register("h1", Passed()).status, 200);
  ASSERT_EQ(Reply(h_->c().HostAction(kRoot, "h1", "close")).status, 200);
  Heartbeat("h1", Failed("ERROR: bad"));
  Heartbeat("h1", Passed());
  EXPECT_EQ(Host("h1")["state"], "closed");
  ASSERT_EQ(Reply(h_->c().HostAction(kRoot, "h1", "open")).status, 200);
  EXPECT_EQ(Host("h1")["state"], "ok");
}

TEST_F(HealthCheckControllerTest, AnAdministratorsOpenDoesNotLiftAFailingCheck) {
  ASSERT_EQ(Register("h1", Passed()).status, 200);
  Heartbeat("h1", Failed("ERROR: bad"));
  const json opened = Reply(h_->c().HostAction(kRoot, "h1", "open")).body;
  EXPECT_EQ(opened["state"], "closed") << opened.dump();
  EXPECT_EQ(opened.value("reason", ""), "health check: ERROR: bad");
  Heartbeat("h1", Passed());
  EXPECT_EQ(Host("h1")["state"], "ok");
}

TEST_F(HealthCheckControllerTest, AHostWithoutACheckIgnoresFailedReports) {
  ASSERT_EQ(Register("h2", Failed("ERROR: stale")).status, 200);
  Heartbeat("h2", Failed("ERROR: stale"));
  EXPECT_EQ(Host("h2")["state"], "ok");
}

TEST_F(HealthCheckControllerTest, AfterARestartTheRegistrationsReportClosesTheHostAtOnce) {
  ASSERT_EQ(Register("h1", Passed()).status, 200);
  Heartbeat("h1", Failed("ERROR: bad"));
  h_->Close();
  Open();
  ASSERT_EQ(Register("h1", Failed("ERROR: bad")).status, 200);
  EXPECT_EQ(Host("h1")["state"], "closed");
  EXPECT_EQ(Host("h1").value("reason", ""), "health check: ERROR: bad");
}

TEST_F(HealthCheckControllerTest, AHostileReportIsRefused) {
  ASSERT_EQ(Register("h1").status, 200);
  Reply r = h_->c().Heartbeat(
      "h1", {{"epoch", h_->c().epoch()}, {"health", Failed(std::string(10'000, 'x'))}});
  EXPECT_EQ(r.status, 400) << r.body.dump();
  r = h_->c().Heartbeat("h1", {{"epoch", h_->c().epoch()}, {"health", {{"ok", "no"}}}});
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_EQ(Host("h1")["state"], "ok");
}

}  // namespace
}  // namespace sluice::server
