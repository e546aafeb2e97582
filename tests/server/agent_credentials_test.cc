// Agent credentials bound to hosts (issue 19): an `auth.agents` token registers and
// heartbeats only for the hosts its entry lists (a range, a list; clear or SHA-256); for any
// other host it gets 403 naming the host and what it covers; the shared agent token still
// serves every host (backward compatible); a user token is no agent; the YAML is checked.
#include "server/agent_credentials.h"

#include <gtest/gtest.h>

#include <string>

#include "auth/digest.h"
#include "config/cluster_yaml.h"
#include "server/guard_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;

// h1..h3 and gpu1; agent tokens: rack1-secret for h[1-2] (clear), gpu-secret for gpu1 and h3
// (given by its SHA-256).
constexpr char kConfig[] = R"(hosts:
  - {name: h1, slots: 4}
  - {name: h2, slots: 4}
  - {name: h3, slots: 4}
  - {name: gpu1, slots: 4}
queues:
  - {name: normal}
auth:
  agent_token: agent-secret
  agents:
    - {hosts: "h[1-2]", token: rack1-secret}
    - {hosts: [gpu1, h3], token_sha256: DIGEST}
  users:
    - {name: alice, token: alice-token}
)";

std::string Config() {
  std::string text = kConfig;
  const std::string digest = auth::ToHex(auth::Sha256("gpu-secret"));
  text.replace(text.find("DIGEST"), 6, digest);
  return text;
}

RawReply Register(int port, const std::string& host, const std::string& token) {
  return SendRaw(
      port, RawPost("/v1/agents/register",
                    json{{"name", host}, {"slots", 4}, {"instance", "i-" + host}}.dump(), token));
}

RawReply Heartbeat(int port, const std::string& host, const std::string& token) {
  return SendRaw(port, RawPost("/v1/agents/" + host + "/heartbeat",
                               json{{"wait_ms", 0}, {"instance", "i-" + host}}.dump(), token));
}

class AgentCredentialsTest : public GuardTest {
 protected:
  void SetUp() override { StartServer(Config()); }
};

TEST_F(AgentCredentialsTest, AHostBoundTokenServesItsHostsOnly) {
  EXPECT_EQ(Register(port_, "h1", "rack1-secret").status, 200);
  EXPECT_EQ(Register(port_, "h2", "rack1-secret").status, 200);
  EXPECT_EQ(Heartbeat(port_, "h1", "rack1-secret").status, 200);

  RawReply other = Register(port_, "gpu1", "rack1-secret");
  EXPECT_EQ(other.status, 403) << other.body;
  EXPECT_NE(ErrorOf(other).find("may not serve host gpu1 (it covers h1, h2)"), std::string::npos)
      << other.body;
  // A heartbeat for a host its credential does not cover, even one registered by another.
  ASSERT_EQ(Register(port_, "h3", "gpu-secret").status, 200);
  RawReply stolen = Heartbeat(port_, "h3", "rack1-secret");
  EXPECT_EQ(stolen.status, 403) << stolen.body;
  EXPECT_EQ(Heartbeat(port_, "h3", "gpu-secret").status, 200);
  EXPECT_EQ(Register(port_, "gpu1", "gpu-secret").status, 200);
  EXPECT_EQ(Register(port_, "h1", "gpu-secret").status, 403);
}

// The batched heartbeat of virtual hosts (wire/agent_batch.h) is held to the same rule for
// every host it names, whether it reports (`hosts`) or only polls (`poll`).
TEST_F(AgentCredentialsTest, ABatchedHeartbeatMayNameOnlyTheCredentialsHosts) {
  ASSERT_EQ(Register(port_, "h1", "rack1-secret").status, 200);
  ASSERT_EQ(Register(port_, "h3", "gpu-secret").status, 200);
  auto batch = [&](const json& body) {
    return SendRaw(port_, RawPost("/v1/agents/heartbeats", body.dump(), "rack1-secret"));
  };
  const json own = {{"name", "h1"}, {"heartbeat", {{"instance", "i-h1"}}}};
  const json other = {{"name", "h3"}, {"heartbeat", {{"instance", "i-h3"}}}};
  EXPECT_EQ(batch({{"wait_ms", 0}, {"hosts", {own}}}).status, 200);
  RawReply reported = batch({{"wait_ms", 0}, {"hosts", {own, other}}});
  EXPECT_EQ(reported.status, 403) << reported.body;
  EXPECT_NE(ErrorOf(reported).find("may not serve host h3"), std::string::npos) << reported.body;
  RawReply polled = batch({{"wait_ms", 0}, {"poll", {"h3"}}, {"instance", "i-h3"}});
  EXPECT_EQ(polled.status, 403) << polled.body;
}

TEST_F(AgentCredentialsTest, TheSharedAgentTokenStillServesAnyHostAndUsersServeNone) {
  EXPECT_EQ(Register(port_, "gpu1", "agent-secret").status, 200);
  EXPECT_EQ(Register(port_, "h1", "agent-secret").status, 200);
  EXPECT_EQ(Register(port_, "h2", "alice-token").status, 403);
  EXPECT_EQ(Register(port_, "h2", "no-such-token").status, 401);
}

TEST(AgentCredentialsYamlTest, EntriesNeedHostsAndExactlyOneToken) {
  config::AuthConfig auth;
  auto parsed = config::ParseClusterConfig(Config(), "c.yaml", &auth);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message();
  ASSERT_EQ(auth.agents.size(), 2u);
  EXPECT_EQ(auth.agents[0].hosts, (std::vector<std::string>{"h1", "h2"}));
  EXPECT_EQ(auth.agents[1].hosts, (std::vector<std::string>{"gpu1", "h3"}));
  EXPECT_EQ(auth.agents[1].token_sha256.size(), 64u);

  const auto error_of = [](const std::string& agents) {
    auto result = config::ParseClusterConfig(
        "hosts:\n  - {name: h1}\nqueues:\n  - {name: q}\nauth:\n  agents:\n" + agents, "c.yaml");
    return result.has_value() ? std::string() : result.error().message();
  };
  EXPECT_NE(error_of("    - {token: t}\n").find("needs hosts"), std::string::npos);
  EXPECT_NE(error_of("    - {hosts: h1}\n").find("needs hosts and a token"), std::string::npos);
  EXPECT_NE(error_of("    - {hosts: h1, token: a, token_sha256: " + std::string(64, 'a') + "}\n")
                .find("not both"),
            std::string::npos);
  EXPECT_NE(error_of("    - {hosts: \"h[3-1]\", token: a}\n"), "");
  EXPECT_NE(error_of("    - {hosts: h1, token: a}\n    - {hosts: h2, token: a}\n")
                .find("duplicate token"),
            std::string::npos);
  EXPECT_NE(error_of("    - {hosts: h1, token: a, port: 1}\n").find("unknown key"),
            std::string::npos);
}

TEST(AgentCredentialsCheckTest, TheMessageNamesTheHostAndAbbreviatesLongLists) {
  Caller unbound{.agent = true};
  EXPECT_TRUE(CheckAgentHost(unbound, "anything").ok());
  Caller many{.agent = true};
  many.agent_hosts = std::make_shared<const std::set<std::string>>(
      std::set<std::string>{"a1", "a2", "a3", "a4", "a5", "a6", "a7"});
  EXPECT_TRUE(CheckAgentHost(many, "a7").ok());
  const Status refused = CheckAgentHost(many, "b1");
  EXPECT_EQ(refused.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.message().find("host b1 (it covers a1, a2, a3, a4, a5, ... (7 hosts))"),
            std::string::npos)
      << refused.message();
}

}  // namespace
}  // namespace sluice::server
