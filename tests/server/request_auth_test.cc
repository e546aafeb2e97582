// RequestAuthenticator without munged: bearer tokens in clear and as SHA-256 digests, the
// agent's token either way, administrators from `auth.admins`, and MUNGE refused when off or
// when munged cannot be reached. (MUNGE with a real munged: tests/integration/munge_auth_test.)
#include "server/request_auth.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/digest.h"

namespace sluice::server {
namespace {

config::AuthConfig Config() {
  config::AuthConfig auth;
  auth.agent_token_sha256 = auth::ToHex(auth::Sha256("agent-secret"));
  auth.users = {{.name = "alice", .token = "alice-token"},
                {.name = "bob", .token_sha256 = auth::ToHex(auth::Sha256("bob-token"))},
                {.name = "carol", .token = "carol-token", .admin = true}};
  auth.admins = {"bob"};
  return auth;
}

TEST(RequestAuthTest, ClearAndHashedTokensNameTheirUsers) {
  RequestAuthenticator auth(Config(), {});
  Result<Caller> alice = auth.Authenticate("Bearer alice-token");
  ASSERT_TRUE(alice.has_value()) << alice.error().ToString();
  EXPECT_EQ(alice->user, "alice");
  EXPECT_FALSE(alice->admin);
  Result<Caller> bob = auth.Authenticate("Bearer bob-token");  // only its digest is configured
  ASSERT_TRUE(bob.has_value()) << bob.error().ToString();
  EXPECT_EQ(bob->user, "bob");
  EXPECT_TRUE(bob->admin);                                      // auth.admins
  EXPECT_TRUE(auth.Authenticate("Bearer carol-token")->admin);  // admin: true
  Result<Caller> agent = auth.Authenticate("Bearer agent-secret");
  ASSERT_TRUE(agent.has_value());
  EXPECT_TRUE(agent->agent);
}

TEST(RequestAuthTest, RefusesWrongTokensAndTheDigestItself) {
  RequestAuthenticator auth(Config(), {});
  const std::string bob_digest = auth::ToHex(auth::Sha256("bob-token"));
  const std::vector<std::string> headers = {
      "Bearer wrong",       "Bearer ",           "Bearer " + bob_digest, "Bearer alice-token2", "",
      "Basic YWxpY2U6eA==", "bearer alice-token"};
  for (const std::string& header : headers) {
    SCOPED_TRACE(header);
    Result<Caller> caller = auth.Authenticate(header);
    ASSERT_FALSE(caller.has_value());
    EXPECT_EQ(caller.error().code(), StatusCode::kUnauthenticated);
  }
}

TEST(RequestAuthTest, ReconfigureReplacesTheTokens) {
  RequestAuthenticator auth(Config(), {});
  config::AuthConfig next;
  next.users = {{.name = "alice", .token = "new-token"}};
  auth.Configure(next);
  EXPECT_FALSE(auth.Authenticate("Bearer alice-token").has_value());
  EXPECT_EQ(auth.Authenticate("Bearer new-token")->user, "alice");
}

TEST(RequestAuthTest, MungeIsRefusedWhenOffAndUnavailableWithoutMunged) {
  RequestAuthenticator off(Config(), {});
  EXPECT_EQ(off.Authenticate("Munge MUNGE:abc:").error().code(), StatusCode::kUnauthenticated);
  RequestAuthenticator on(Config(), {.munge_socket = "/nonexistent/munge.socket"});
  EXPECT_EQ(on.Authenticate("Munge MUNGE:abc:").error().code(), StatusCode::kUnavailable);
}

// Issue 47.8: MUNGE's root acts as the agent on agent routes and as the user root on the
// others; the agent token stays on the agent routes and users off them.
TEST(RequestAuthTest, MungeRootActsInEitherRoleTheAgentTokenInOne) {
  const Caller root{.user = "root", .admin = true, .agent = true, .munge_root = true};
  Caller as;
  ASSERT_TRUE(AuthorizeRoute(root, false, as).ok());
  EXPECT_FALSE(as.agent);
  EXPECT_EQ(as.user, "root");
  EXPECT_TRUE(as.admin);
  ASSERT_TRUE(AuthorizeRoute(root, true, as).ok());
  EXPECT_TRUE(as.agent);
  const Caller agent{.agent = true};
  EXPECT_EQ(AuthorizeRoute(agent, false, as).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(AuthorizeRoute(agent, true, as).ok());
  const Caller alice{.user = "alice"};
  EXPECT_EQ(AuthorizeRoute(alice, true, as).code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(AuthorizeRoute(alice, false, as).ok());
  EXPECT_EQ(AuthorizeRoute(Status(StatusCode::kUnauthenticated, "no"), false, as).code(),
            StatusCode::kUnauthenticated);
}

TEST(RequestAuthTest, AdministratorsAreTheAdminsListAndAdminTokenUsers) {
  RequestAuthenticator auth(Config(), {});
  EXPECT_TRUE(auth.IsAdmin("bob"));    // auth.admins
  EXPECT_TRUE(auth.IsAdmin("carol"));  // admin: true
  EXPECT_FALSE(auth.IsAdmin("alice"));
}

}  // namespace
}  // namespace sluice::server
