// What the server does to a submission's environment and output (issue 47.1, 47.4, 48):
// credentials never travel, an allow list keeps only what it names, and a job without `-o`
// writes to a file in its working directory rather than to /dev/null.
#include "server/job_environment.h"

#include <gtest/gtest.h>

namespace sluice::server {
namespace {

using nlohmann::json;

TEST(JobPolicyTest, GlobsMatchWholeNames) {
  EXPECT_TRUE(GlobMatches("SLUICE_TOKEN", "SLUICE_TOKEN"));
  EXPECT_FALSE(GlobMatches("SLUICE_TOKEN", "SLUICE_TOKENS"));
  EXPECT_TRUE(GlobMatches("SLUICE_*_TOKEN", "SLUICE_AGENT_TOKEN"));
  EXPECT_FALSE(GlobMatches("SLUICE_*_TOKEN", "SLUICE_TOKEN"));
  EXPECT_TRUE(GlobMatches("MUNGE_*", "MUNGE_"));
  EXPECT_TRUE(GlobMatches("*", ""));
  EXPECT_TRUE(GlobMatches("*A*B*", "xxAyyBzz"));
  EXPECT_FALSE(GlobMatches("*A*B*", "xxByyAzz"));
  EXPECT_FALSE(GlobMatches("", "A"));
}

TEST(JobPolicyTest, CredentialsNeverTravel) {
  json spec = {{"cwd", "/w"},
               {"output", "o"},
               {"env",
                {{"MYVAR", "1"},
                 {"PATH", "/usr/bin"},
                 {"SLUICE_TOKEN", "alice-token"},
                 {"SLUICE_AGENT_TOKEN", "a"},
                 {"MUNGE_SOCKET", "/run/m"}}}};
  const std::vector<std::string> removed = ApplyJobPolicy(config::JobPolicy{}, spec);
  EXPECT_EQ(spec["env"], (json{{"MYVAR", "1"}, {"PATH", "/usr/bin"}}));
  EXPECT_EQ(removed.size(), 3u);
}

TEST(JobPolicyTest, AnAllowListKeepsOnlyWhatItNamesAndTheDenyListStillHolds) {
  config::JobPolicy policy;
  policy.env_allow = {"PATH", "MY*", "SLUICE_TOKEN"};
  json spec = {{"output", "o"},
               {"env", {{"MYVAR", "1"}, {"PATH", "/p"}, {"HOME", "/h"}, {"SLUICE_TOKEN", "t"}}}};
  ApplyJobPolicy(policy, spec);
  EXPECT_EQ(spec["env"], (json{{"MYVAR", "1"}, {"PATH", "/p"}}));
}

TEST(JobPolicyTest, OutputDefaultsToAFileInTheWorkingDirectory) {
  json plain = {{"cwd", "/home/a"}};
  ApplyJobPolicy(config::JobPolicy{}, plain);
  EXPECT_EQ(plain["output"], "/home/a/sluice-%j.out");
  EXPECT_EQ(plain["output_default"], true);

  json array = {{"cwd", "/home/a"}, {"array", {{"first", 1}, {"last", 4}}}};
  ApplyJobPolicy(config::JobPolicy{}, array);
  EXPECT_EQ(array["output"], "/home/a/sluice-%A_%a.out");

  json named = {{"cwd", "/home/a"}, {"output", "/tmp/mine"}};
  ApplyJobPolicy(config::JobPolicy{}, named);
  EXPECT_EQ(named["output"], "/tmp/mine");
  EXPECT_FALSE(named.contains("output_default"));

  config::JobPolicy absolute;
  absolute.default_output = "/spool/%j.out";
  json spooled = {{"cwd", "/home/a"}};
  ApplyJobPolicy(absolute, spooled);
  EXPECT_EQ(spooled["output"], "/spool/%j.out");

  config::JobPolicy discard;
  discard.default_output = "";
  json discarded = {{"cwd", "/home/a"}};
  ApplyJobPolicy(discard, discarded);
  EXPECT_FALSE(discarded.contains("output"));
}

}  // namespace
}  // namespace sluice::server
