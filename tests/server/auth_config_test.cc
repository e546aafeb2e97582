// The `auth:` section of the cluster YAML (R-SRV-5b): parsed for the server, checked with
// file:line messages like every other section, invisible to the core.
#include <gtest/gtest.h>

#include "config/cluster_yaml.h"

namespace sluice::config {
namespace {

constexpr const char* kQueues = "queues:\n  - {name: normal}\n";

TEST(AuthConfigTest, TokensAndAdminsAreRead) {
  const std::string text = std::string(kQueues) +
                           "auth:\n"
                           "  agent_token: agent-secret\n"
                           "  users:\n"
                           "    - {name: alice, token: t1}\n"
                           "    - {name: root, token: t2, admin: true}\n";
  AuthConfig auth;
  auto config = ParseClusterConfig(text, "c.yaml", &auth);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(auth.agent_token, "agent-secret");
  ASSERT_EQ(auth.users.size(), 2u);
  EXPECT_EQ(auth.users[0].name, "alice");
  EXPECT_FALSE(auth.users[0].admin);
  EXPECT_EQ(auth.users[1].token, "t2");
  EXPECT_TRUE(auth.users[1].admin);
  // Callers that do not ask for auth still accept a file that has it.
  EXPECT_TRUE(ParseClusterConfig(text, "c.yaml"));
}

TEST(AuthConfigTest, MistakesAreReportedWithTheirLine) {
  const struct {
    const char* auth;
    const char* message;
  } cases[] = {
      {"auth:\n  colour: red\n", "c.yaml:4: auth.colour: unknown key"},
      {"auth:\n  users:\n    - {name: a}\n",
       "c.yaml:5: auth.users[0]: a user needs a name and a token"},
      {"auth:\n  users:\n    - {name: a, token: x}\n    - {name: a, token: y}\n",
       "c.yaml:6: auth.users[1]: duplicate user 'a'"},
      {"auth:\n  agent_token: x\n  users:\n    - {name: a, token: x}\n",
       "c.yaml:6: auth.users[0]: duplicate token"},
      {"auth:\n  users:\n    - {name: a, token: x, admin: maybe}\n", "auth.users[0].admin"},
      {"auth: [1]\n", "c.yaml:3: auth"},
  };
  for (const auto& c : cases) {
    AuthConfig auth;
    auto config = ParseClusterConfig(std::string(kQueues) + c.auth, "c.yaml", &auth);
    ASSERT_FALSE(config) << c.auth;
    EXPECT_NE(config.error().message().find(c.message), std::string::npos)
        << c.auth << "\n  got: " << config.error().message();
  }
}

}  // namespace
}  // namespace sluice::config
