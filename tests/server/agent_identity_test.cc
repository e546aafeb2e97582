// Agent identity (issue 19): the agent token registered any host name (a 64-slot `rogue1`
// went straight to ok), re-registered a connected host's name (its jobs were killed), and
// junk hosts survived restarts. Now: names outside the YAML need auth.allow_dynamic_hosts, a
// second agent instance for a connected host gets 409 until the first's lease expired, and
// dynamic hosts are not restored unless allowed.
#include <gtest/gtest.h>

#include <string>

#include "server/guard_fixture.h"
#include "testing/wait.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string Register(const std::string& name, const std::string& instance) {
  json body = {{"name", name}, {"slots", 4}};
  if (!instance.empty()) body["instance"] = instance;
  return RawPost("/v1/agents/register", body.dump(), "agent-secret");
}

std::string Heartbeat(const std::string& name, const std::string& instance) {
  return RawPost("/v1/agents/" + name + "/heartbeat",
                 json{{"wait_ms", 0}, {"instance", instance}}.dump(), "agent-secret");
}

class AgentIdentityTest : public GuardTest {
 protected:
  void Tune(ServerOptions& options) override { options.controller.lease_ms = 1000; }

  std::vector<std::string> HostNames() {
    httplib::Client client("127.0.0.1", port_);
    auto r = client.Get("/v1/hosts", {{"Authorization", "Bearer alice-token"}});
    std::vector<std::string> names;
    if (!r) return names;
    for (const json& host : json::parse(r->body)) names.push_back(host["name"]);
    return names;
  }
};

TEST_F(AgentIdentityTest, ANameOutsideTheConfigurationIsRefused) {
  RawReply r = SendRaw(port_, Register("rogue1", "x"));
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(ErrorOf(r).find("allow_dynamic_hosts"), std::string::npos) << r.body;
  EXPECT_EQ(HostNames(), (std::vector<std::string>{"h1", "h2"}));
  EXPECT_EQ(SendRaw(port_, Register("h1", "x")).status, 200);
}

TEST_F(AgentIdentityTest, ASecondAgentForAConnectedHostWaitsForTheFirstsLease) {
  ASSERT_EQ(SendRaw(port_, Register("h1", "first")).status, 200);
  RawReply second = SendRaw(port_, Register("h1", "second"));
  EXPECT_EQ(second.status, 409) << second.body;
  EXPECT_NE(ErrorOf(second).find("lease"), std::string::npos) << second.body;
  EXPECT_EQ(SendRaw(port_, Heartbeat("h1", "second")).status, 409);
  EXPECT_EQ(SendRaw(port_, Heartbeat("h1", "first")).status, 200);
  // The first goes silent; once its lease (1 s) expired the second may take the host.
  EXPECT_TRUE(sluice::testing::Eventually(
      [&] { return SendRaw(port_, Register("h1", "second")).status == 200; }, 30s, 100ms))
      << "the second agent never took the host";
  // The first, back, is told another agent holds the host.
  EXPECT_EQ(SendRaw(port_, Heartbeat("h1", "first")).status, 409);
  EXPECT_EQ(SendRaw(port_, Heartbeat("h1", "second")).status, 200);
}

TEST_F(AgentIdentityTest, DynamicHostsAreNotRestoredUnlessAllowed) {
  std::string allowed = kGuardConfig;
  allowed.replace(allowed.find("  agent_token:"), 0, "  allow_dynamic_hosts: true\n");
  server_.reset();
  StartServer(allowed);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(SendRaw(port_, Register("junk" + std::to_string(i), "j")).status, 200);
  }
  EXPECT_EQ(HostNames().size(), 22u);
  server_.reset();
  StartServer(kGuardConfig);
  EXPECT_EQ(HostNames(), (std::vector<std::string>{"h1", "h2"}));
  server_.reset();
  StartServer(allowed);
  EXPECT_EQ(HostNames().size(), 22u);
}

}  // namespace
}  // namespace sluice::server
