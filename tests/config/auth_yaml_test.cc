// The `auth:` section: an agent token and users with distinct names and tokens.
#include "config/auth_yaml.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace sluice::config::yaml {
namespace {

Result<AuthConfig> Read(std::string_view text) {
  const Reader reader("f.yaml");
  AuthConfig auth;
  SLUICE_RETURN_IF_ERROR(ReadAuth(reader, Field{YAML::Load(std::string(text)), "auth", 1}, auth));
  return auth;
}

TEST(AuthYamlTest, ReadsTheAgentTokenAndUsers) {
  Result<AuthConfig> auth = Read(
      "agent_token: s3cret\n"
      "users:\n"
      "  - {name: alice, token: ta, admin: true}\n"
      "  - {name: bob, token: tb}\n");
  ASSERT_TRUE(auth.has_value()) << auth.error().ToString();
  EXPECT_EQ(auth->agent_token, "s3cret");
  ASSERT_EQ(auth->users.size(), 2u);
  EXPECT_EQ(auth->users[0].name, "alice");
  EXPECT_TRUE(auth->users[0].admin);
  EXPECT_FALSE(auth->users[1].admin);
  EXPECT_TRUE(Read("~").value().users.empty());
}

TEST(AuthYamlTest, DynamicHostsAreOffUnlessAllowed) {
  EXPECT_FALSE(Read("agent_token: a\n").value().allow_dynamic_hosts);
  EXPECT_TRUE(Read("allow_dynamic_hosts: true\n").value().allow_dynamic_hosts);
  EXPECT_FALSE(Read("allow_dynamic_hosts: maybe\n").has_value());
}

TEST(AuthYamlTest, RefusesWhatCannotAuthenticate) {
  struct Case {
    std::string_view name;
    std::string_view text;
  };
  const Case cases[] = {
      {"not a map", "[a]"},
      {"unknown key", "tokens: x"},
      {"a user without a token", "users: [{name: a}]"},
      {"a user without a name", "users: [{token: t}]"},
      {"an unknown user key", "users: [{name: a, token: t, role: x}]"},
      {"duplicate user", "users: [{name: a, token: t1}, {name: a, token: t2}]"},
      {"shared token", "users: [{name: a, token: t}, {name: b, token: t}]"},
      {"a user's token is the agent's", "agent_token: t\nusers: [{name: a, token: t}]"},
      {"admin is not a bool", "users: [{name: a, token: t, admin: maybe}]"},
      {"a token with a space", "agent_token: 'a b'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<AuthConfig> auth = Read(c.text);
    ASSERT_FALSE(auth.has_value());
    EXPECT_EQ(auth.error().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace sluice::config::yaml
