// LeaderFollower (wire/leader_follow.h): how the CLI and agents move between controllers.
#include "wire/leader_follow.h"

#include <gtest/gtest.h>

namespace sluice::wire {
namespace {

using std::chrono::milliseconds;

TEST(LeaderFollowTest, ParseServerListAddsTheSchemeAndRefusesEmptyItems) {
  Result<std::vector<std::string>> urls = ParseServerList("h1:1, http://h2:2/ ,https://h3:3");
  ASSERT_TRUE(urls);
  EXPECT_EQ(*urls, (std::vector<std::string>{"http://h1:1", "http://h2:2", "https://h3:3"}));
  EXPECT_EQ(ParseServerList("").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseServerList("h1:1,,h2:2").error().code(), StatusCode::kInvalidArgument);
  // Another scheme (the HTTP library threw on it: an agent given ftp:// died) or no host.
  Result<std::vector<std::string>> ftp = ParseServerList("h1:1,ftp://h2:2");
  ASSERT_FALSE(ftp);
  EXPECT_EQ(ftp.error().message(),
            "server list `h1:1,ftp://h2:2`: item 2 `ftp://h2:2`: expected http://HOST:PORT or "
            "https://HOST:PORT");
  EXPECT_FALSE(ParseServerList("http://"));
}

TEST(LeaderFollowTest, BaseUrlDropsThePath) {
  EXPECT_EQ(BaseUrl("http://h:1/v1/jobs?x=1"), "http://h:1");
  EXPECT_EQ(BaseUrl("http://h:1"), "http://h:1");
  EXPECT_EQ(BaseUrl("/v1/jobs"), "");
}

TEST(LeaderFollowTest, ARedirectGoesToTheLeaderAtOnce) {
  LeaderFollower f({"http://a:1", "http://b:2"});
  EXPECT_EQ(f.OnNotServed(307, "http://b:2/v1/jobs"), milliseconds(0));
  EXPECT_EQ(f.current(), "http://b:2");
  f.OnSuccess();
  // A leader not in the list is added.
  EXPECT_EQ(f.OnNotServed(503, "http://c:3"), milliseconds(0));
  EXPECT_EQ(f.current(), "http://c:3");
  EXPECT_EQ(f.urls().size(), 3u);
}

TEST(LeaderFollowTest, FailuresTryEveryUrlThenBackOffBoundedAndSuccessResets) {
  LeaderFollower f({"http://a:1", "http://b:2"},
                   {.first_backoff = milliseconds(10), .max_backoff = milliseconds(40)});
  EXPECT_EQ(f.OnNotServed(0, ""), milliseconds(0));  // b not tried yet
  EXPECT_EQ(f.current(), "http://b:2");
  EXPECT_EQ(f.OnNotServed(503, ""), milliseconds(10));  // a round done: wait
  EXPECT_EQ(f.current(), "http://a:1");
  EXPECT_EQ(f.OnNotServed(409, ""), milliseconds(20));
  EXPECT_EQ(f.OnNotServed(0, ""), milliseconds(40));
  EXPECT_EQ(f.OnNotServed(0, ""), milliseconds(40));  // bounded
  f.OnSuccess();
  EXPECT_EQ(f.OnNotServed(0, ""), milliseconds(0));
}

TEST(LeaderFollowTest, RedirectLoopsBackOffLikeFailures) {
  LeaderFollower f({"http://a:1", "http://b:2"}, {.first_backoff = milliseconds(10)});
  EXPECT_EQ(f.OnNotServed(307, "http://b:2"), milliseconds(0));
  EXPECT_EQ(f.OnNotServed(307, "http://a:1"), milliseconds(10));
  EXPECT_EQ(f.current(), "http://a:1");
}

TEST(LeaderFollowTest, NotServedStatuses) {
  EXPECT_TRUE(LeaderFollower::NotServed(0));
  EXPECT_TRUE(LeaderFollower::NotServed(307));
  EXPECT_TRUE(LeaderFollower::NotServed(503));
  EXPECT_FALSE(LeaderFollower::NotServed(200));
  EXPECT_FALSE(LeaderFollower::NotServed(404));
}

}  // namespace
}  // namespace sluice::wire
