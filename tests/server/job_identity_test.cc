// Which account a submission runs as, and the refusal of uid 0 (R-SEC-1).
#include "server/job_identity.h"

#include <gtest/gtest.h>

namespace sluice::server {
namespace {

config::AuthConfig Auth(bool allow_root_jobs = false) {
  return config::AuthConfig{.users = {{.name = "alice", .token = "ta", .unix_user = "nobody"},
                                      {.name = "bob", .token = "tb"},
                                      {.name = "carol", .token = "tc", .unix_user = "root"},
                                      {.name = "root", .token = "tr", .admin = true}},
                            .allow_root_jobs = allow_root_jobs};
}

TEST(JobIdentityTest, AUserRunsAsItsUnixUserElseItsName) {
  Result<Caller> alice = WithJobAccount(Auth(), Caller{.user = "alice"});
  ASSERT_TRUE(alice) << alice.error().message();
  EXPECT_EQ(alice->account, "nobody");
  EXPECT_EQ(alice->user, "alice");
  Result<Caller> bob = WithJobAccount(Auth(), Caller{.user = "bob"});
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->account, "bob");  // unknown on this host: left to the agents
  // A caller the YAML does not list (e.g. authenticated by MUNGE) runs as its name.
  Result<Caller> munge = WithJobAccount(Auth(), Caller{.user = "daemon"});
  ASSERT_TRUE(munge);
  EXPECT_EQ(munge->account, "daemon");
}

TEST(JobIdentityTest, UidZeroIsRefusedUnlessAllowed) {
  for (const char* user : {"carol", "root"}) {
    SCOPED_TRACE(user);
    Result<Caller> refused = WithJobAccount(Auth(), Caller{.user = user});
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument);
    Result<Caller> allowed = WithJobAccount(Auth(/*allow_root_jobs=*/true), Caller{.user = user});
    ASSERT_TRUE(allowed);
    EXPECT_EQ(allowed->account, "root");
  }
}

TEST(JobIdentityTest, AStoredSpecRunsAsItsAccountElseItsUser) {
  EXPECT_EQ(AccountOf({{"user", "alice"}, {"account", "nobody"}}), "nobody");
  EXPECT_EQ(AccountOf({{"user", "alice"}}), "alice");  // stored before R-SEC-1
}

}  // namespace
}  // namespace sluice::server
