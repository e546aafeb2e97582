// The `auth:` section: an agent token and users with distinct names and tokens, and the
// identity keys (R-SEC-1): a user's `unix_user` (the account its jobs run as) and
// `allow_root_jobs`.
#include "config/auth_yaml.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config::yaml {
namespace {

// SHA-256 of "secret", as `printf %s secret | sha256sum` prints it.
const std::string kDigest = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

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

TEST(AuthYamlTest, ReadsDigestsAdministratorsAndMunge) {
  std::string upper = kDigest;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  Result<AuthConfig> auth = Read("agent_token_sha256: " + upper +
                                 "\n"
                                 "users: [{name: bob, token_sha256: " +
                                 std::string(64, 'a') +
                                 "}]\n"
                                 "admins: [root, daemon]\n"
                                 "munge: {socket: /tmp/m.sock}\n");
  ASSERT_TRUE(auth.has_value()) << auth.error().ToString();
  EXPECT_EQ(auth->agent_token_sha256, kDigest);  // stored lowercase
  EXPECT_EQ(auth->users[0].token_sha256, std::string(64, 'a'));
  EXPECT_TRUE(auth->users[0].token.empty());
  EXPECT_EQ(auth->admins, (std::vector<std::string>{"root", "daemon"}));
  EXPECT_TRUE(auth->munge.enabled);
  EXPECT_EQ(auth->munge.socket, "/tmp/m.sock");
  Result<AuthConfig> defaults = Read("munge: {}");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_TRUE(defaults->munge.enabled);
  EXPECT_EQ(defaults->munge.socket, "/run/munge/munge.socket.2");
  EXPECT_FALSE(Read("users: []").value().munge.enabled);
}

TEST(AuthYamlTest, AUserNamesTheAccountItsJobsRunAs) {
  Result<AuthConfig> auth = Read(
      "users:\n"
      "  - {name: alice, token: ta, unix_user: nobody}\n"
      "  - {name: bob, token: tb}\n");
  ASSERT_TRUE(auth.has_value()) << auth.error().ToString();
  EXPECT_EQ(auth->users[0].unix_user, "nobody");
  EXPECT_EQ(auth->users[1].unix_user, "");  // its jobs run as `bob`
  EXPECT_FALSE(auth->allow_root_jobs);
}

TEST(AuthYamlTest, RootJobsAreAllowedOnlyWhenSaidSo) {
  Result<AuthConfig> auth = Read("allow_root_jobs: true\n");
  ASSERT_TRUE(auth.has_value()) << auth.error().ToString();
  EXPECT_TRUE(auth->allow_root_jobs);
}

TEST(AuthYamlTest, RefusesWhatCannotAuthenticate) {
  struct Case {
    std::string_view name;
    std::string text;
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
      {"a token and its digest", "users: [{name: a, token: t, token_sha256: " + kDigest + "}]"},
      {"a short digest", "users: [{name: a, token_sha256: abc}]"},
      {"a digest that is not hex",
       "users: [{name: a, token_sha256: " + std::string(64, 'z') + "}]"},
      {"a shared digest", "users: [{name: a, token_sha256: " + kDigest +
                              "}, {name: b, token_sha256: " + kDigest + "}]"},
      {"the agent token twice", "agent_token: t\nagent_token_sha256: " + kDigest},
      {"admins not a list", "admins: root"},
      {"a relative munge socket", "munge: {socket: munge.sock}"},
      {"an unknown munge key", "munge: {ttl: 3}"},
      {"allow_root_jobs not a bool", "allow_root_jobs: sometimes"},
      {"unix_user with a space", "users: [{name: a, token: t, unix_user: 'a b'}]"},
      {"unix_user empty", "users: [{name: a, token: t, unix_user: ''}]"},
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
