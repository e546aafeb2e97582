// JobInfo's compact view of its spec (job_book.h, issue 45): the members listings, counts and
// filters read are set from the spec, and the row holds the submitted spec's text (until stored:
// spec_on_demand_test.cc).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/job_book.h"

namespace sluice::server {
namespace {

using nlohmann::json;

TEST(JobInfoSpecTest, CompactMembersComeFromTheSpec) {
  JobInfo job;
  job.SetSpec({{"user", "alice"},
               {"account", "physics"},
               {"max_tasks", 8},
               {"run_limit", 600},
               {"reservation", "maint"},
               {"array", "1-10"},
               {"command", "true"}});
  EXPECT_EQ(job.user.str(), "alice");
  EXPECT_EQ(job.account.str(), "physics");
  EXPECT_EQ(job.max_tasks, 8);
  EXPECT_EQ(job.run_limit, 600);
  EXPECT_EQ(job.reservation.str(), "maint");
  EXPECT_TRUE(job.has_array);
}

TEST(JobInfoSpecTest, DefaultsWhenTheSpecLeavesThemOut) {
  JobInfo job;
  job.SetSpec({{"user", "bob"}, {"run_limit", nullptr}, {"account", ""}, {"command", "true"}});
  EXPECT_EQ(job.account.str(), "bob");  // no account: the user's (AccountOf)
  EXPECT_EQ(job.max_tasks, 1);
  EXPECT_EQ(job.run_limit, 0);
  EXPECT_TRUE(job.reservation.empty());
  EXPECT_FALSE(job.has_array);
}

TEST(JobInfoSpecTest, TheRowKeepsTheSubmittedSpecsTextWithItsEnvironmentAndScript) {
  const json spec = {{"user", "carol"},
                     {"command", json::array({"script"})},
                     {"script", "#!/bin/sh\necho \"hi\"\n"},
                     {"env", {{"PATH", "/usr/bin"}, {"HOME", "/home/carol"}}}};
  JobInfo job;
  job.SetSpec(spec);
  EXPECT_EQ(job.row.spec.str(), spec.dump());
  EXPECT_EQ(json::parse(job.Stored().spec), spec);  // what the store is given
}

}  // namespace
}  // namespace sluice::server
