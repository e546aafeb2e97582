// The identity keys of the `auth:` section (R-SEC-1): a user's `unix_user` (the account its
// jobs run as) and `allow_root_jobs`.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/auth_yaml.h"

namespace sluice::config::yaml {
namespace {

Result<AuthConfig> Read(std::string_view text) {
  const Reader reader("f.yaml");
  AuthConfig auth;
  SLUICE_RETURN_IF_ERROR(ReadAuth(reader, Field{YAML::Load(std::string(text)), "auth", 1}, auth));
  return auth;
}

TEST(AuthIdentityYamlTest, AUserNamesTheAccountItsJobsRunAs) {
  Result<AuthConfig> auth = Read(
      "users:\n"
      "  - {name: alice, token: ta, unix_user: nobody}\n"
      "  - {name: bob, token: tb}\n");
  ASSERT_TRUE(auth.has_value()) << auth.error().ToString();
  EXPECT_EQ(auth->users[0].unix_user, "nobody");
  EXPECT_EQ(auth->users[1].unix_user, "");  // its jobs run as `bob`
  EXPECT_FALSE(auth->allow_root_jobs);
}

TEST(AuthIdentityYamlTest, RootJobsAreAllowedOnlyWhenSaidSo) {
  Result<AuthConfig> auth = Read("allow_root_jobs: true\n");
  ASSERT_TRUE(auth.has_value()) << auth.error().ToString();
  EXPECT_TRUE(auth->allow_root_jobs);
}

TEST(AuthIdentityYamlTest, RefusesMalformedIdentityKeys) {
  struct Case {
    std::string_view name;
    std::string_view text;
  };
  const Case cases[] = {
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
