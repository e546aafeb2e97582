// Dashboard sessions (issue 47.8): a signed token names its user and expiry; tampering, another
// key, expiry and a missing key refuse it; the controller accepts it across a restart (its key
// is in the store) and gives the user's administrator rights from auth.admins.
#include "server/ui_session.h"

#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;

TEST(UiSessionTest, ATokenNamesItsUserUntilItExpires) {
  UiSessions sessions;
  EXPECT_EQ(sessions.Issue("alice", 100).error().code(), StatusCode::kUnavailable);  // no key
  sessions.SetKey(std::string(32, 'k'));
  Result<std::string> token = sessions.Issue("first.last", 100);
  ASSERT_TRUE(token);
  EXPECT_TRUE(token->starts_with(UiSessions::kPrefix)) << *token;
  Result<std::string> user = sessions.Verify(*token, 99);
  ASSERT_TRUE(user) << user.error().ToString();
  EXPECT_EQ(*user, "first.last");  // dots in a name are fine: it comes last
  EXPECT_EQ(sessions.Verify(*token, 100).error().code(), StatusCode::kUnauthenticated);
}

TEST(UiSessionTest, TamperingOrAnotherKeyIsRefused) {
  UiSessions sessions;
  sessions.SetKey(std::string(32, 'k'));
  const std::string token = *sessions.Issue("alice", 1000);
  std::string other_user = token.substr(0, token.rfind('.') + 1) + "root";
  EXPECT_FALSE(sessions.Verify(other_user, 1));
  std::string later = token;
  later.replace(3, 4, "9999");  // the expiry's digits
  EXPECT_FALSE(sessions.Verify(later, 1));
  for (const char* bad : {"", "ui.", "ui.1000", "ui.x.y.alice", "ui.1000.00.alice", "s.1.2.3"}) {
    EXPECT_FALSE(sessions.Verify(bad, 1)) << bad;
  }
  UiSessions elsewhere;
  elsewhere.SetKey(std::string(32, 'z'));
  EXPECT_FALSE(elsewhere.Verify(token, 1));
}

TEST(UiSessionTest, TheControllerAcceptsItsSessionsAcrossARestart) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const Reply opened(h.c().OpenUiSession(Caller{.user = "alice"}, {{"ttl_seconds", 3600}}));
  ASSERT_EQ(opened.status, 200) << opened.body.dump();
  const std::string token = opened.body["token"];
  const Reply admin(h.c().OpenUiSession(Caller{.user = "root", .admin = true}, json::object()));
  ASSERT_EQ(admin.status, 200);
  EXPECT_EQ(Reply(h.c().OpenUiSession(Caller{.user = "alice"}, {{"ttl_seconds", 5}})).status,
            400);
  h.Close();
  h.Open();
  Result<Caller> alice = h.c().AuthenticateRequest("Bearer " + token);
  ASSERT_TRUE(alice) << alice.error().ToString();
  EXPECT_EQ(alice->user, "alice");
  EXPECT_FALSE(alice->admin);
  Result<Caller> root = h.c().AuthenticateRequest("Bearer " + admin.body["token"].get<std::string>());
  ASSERT_TRUE(root);
  EXPECT_TRUE(root->admin);  // root is an admin token user in the test's auth
  h.Advance(3601 * 1000);
  EXPECT_FALSE(h.c().AuthenticateRequest("Bearer " + token));
}

// A configured token may begin like a session's: it still names its user.
TEST(UiSessionTest, AConfiguredTokenThatLooksLikeASessionStillWorks) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  config::AuthConfig auth = testing::TestAuth();
  auth.users.push_back({.name = "dora", .token = "ui.dora-token"});
  h.Open(testing::TestCluster(), auth);
  Result<Caller> dora = h.c().AuthenticateRequest("Bearer ui.dora-token");
  ASSERT_TRUE(dora) << dora.error().ToString();
  EXPECT_EQ(dora->user, "dora");
  EXPECT_FALSE(h.c().AuthenticateRequest("Bearer ui.1.00.dora"));
}

}  // namespace
}  // namespace sluice::server
