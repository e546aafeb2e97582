// The replay cache: a credential is accepted once until it expires; memory is bounded and a
// full cache refuses rather than forgets an unexpired credential.
#include "auth/replay_cache.h"

#include <gtest/gtest.h>

namespace sluice::auth {
namespace {

TEST(ReplayCacheTest, AcceptsACredentialOnceUntilItExpires) {
  ReplayCache cache(8);
  ASSERT_TRUE(cache.Accept("c1", /*expires_at=*/100, /*now=*/10).ok());
  EXPECT_EQ(cache.Accept("c1", 100, 50).code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(cache.Accept("c1", 100, 100).code(), StatusCode::kUnauthenticated);  // inclusive
  EXPECT_TRUE(cache.Accept("c2", 100, 50).ok());
}

TEST(ReplayCacheTest, RefusesAnExpiredCredential) {
  ReplayCache cache(8);
  EXPECT_EQ(cache.Accept("old", /*expires_at=*/9, /*now=*/10).code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ReplayCacheTest, ForgetsExpiredCredentialsAndStaysBounded) {
  ReplayCache cache(2);
  ASSERT_TRUE(cache.Accept("a", 20, 10).ok());
  ASSERT_TRUE(cache.Accept("b", 30, 10).ok());
  // Full of unexpired credentials: refused, and "a" is not forgotten early.
  EXPECT_EQ(cache.Accept("c", 40, 15).code(), StatusCode::kUnavailable);
  EXPECT_EQ(cache.Accept("a", 20, 15).code(), StatusCode::kUnauthenticated);
  // At 21 "a" expired: its place is free.
  EXPECT_TRUE(cache.Accept("c", 40, 21).ok());
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace sluice::auth
