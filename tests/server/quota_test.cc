// Quotas at submission (issue 19): a queue's max_pending and max_pending_per_user refuse a
// submission beyond them with 429 naming the limit (nothing stored, no id taken); every
// stored field has a byte limit, beyond which a submission is a 400 naming the field.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"
#include "server/field_limits.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;

config::AuthConfig QuotaAuth() {
  config::AuthConfig auth = testing::TestAuth();
  auth.quotas.queues["normal"].max_pending_per_user = 2;
  auth.quotas.queues["bf"].max_pending = 3;
  return auth;
}

json Batch(int n, const std::string& queue) {
  json jobs = json::array();
  for (int i = 0; i < n; ++i) jobs.push_back({{"command", "true"}, {"queue", queue}});
  return {{"jobs", jobs}};
}

TEST(QuotaTest, MaxPendingPerUserRefusesBeyondTheLimitNamingIt) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open(testing::TestCluster(), QuotaAuth());
  const JobId first = h.Submit("alice", {{"command", "true"}, {"hold", true}});
  h.Submit("alice", {{"command", "true"}});
  Reply over = h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}});
  EXPECT_EQ(over.status, 429) << over.body.dump();
  const std::string error = over.body["error"].get<std::string>();
  EXPECT_NE(error.find("max_pending_per_user"), std::string::npos) << error;
  EXPECT_NE(error.find("'normal'"), std::string::npos) << error;
  EXPECT_EQ(over.body["cause"]["limit"], "max_pending_per_user");
  EXPECT_EQ(over.body["cause"]["waiting"], 2);
  // Another user has a quota of their own; a batch is refused whole.
  EXPECT_EQ(h.Submit("bob", {{"command", "true"}}), first + 2);  // no id was taken
  EXPECT_EQ(Reply(h.c().SubmitBatch(Caller{.user = "bob"}, Batch(2, "normal"))).status, 429);
  // A job that leaves the queue makes room.
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, first)).status, 200);
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}})).status, 200);
}

TEST(QuotaTest, MaxPendingCountsEveryUsersWaitingJobs) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open(testing::TestCluster(), QuotaAuth());
  ASSERT_EQ(Reply(h.c().SubmitBatch(Caller{.user = "alice"}, Batch(2, "bf"))).status, 200);
  Reply over = h.c().SubmitBatch(Caller{.user = "bob"}, Batch(2, "bf"));
  EXPECT_EQ(over.status, 429) << over.body.dump();
  EXPECT_EQ(over.body["cause"]["limit"], "max_pending");
  EXPECT_EQ(over.body["cause"]["max"], 3);
  EXPECT_EQ(Reply(h.c().SubmitBatch(Caller{.user = "bob"}, Batch(1, "bf"))).status, 200);
  // Queues without a quota take any number.
  EXPECT_EQ(Reply(h.c().SubmitBatch(Caller{.user = "bob"}, Batch(20, "strict"))).status, 200);
}

TEST(QuotaTest, TheClusterWidePerUserQuotaCountsEveryQueue) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  config::AuthConfig auth = testing::TestAuth();
  auth.quotas.max_pending_per_user = 3;
  h.Open(testing::TestCluster(), auth);
  ASSERT_EQ(Reply(h.c().SubmitBatch(Caller{.user = "alice"}, Batch(2, "bf"))).status, 200);
  ASSERT_EQ(Reply(h.c().SubmitBatch(Caller{.user = "alice"}, Batch(1, "strict"))).status, 200);
  Reply over = h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}});
  EXPECT_EQ(over.status, 429) << over.body.dump();
  EXPECT_TRUE(over.body["cause"]["queue"].is_null());
  EXPECT_NE(over.body["error"].get<std::string>().find("quotas.max_pending_per_user"),
            std::string::npos);
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "bob"}, {{"command", "true"}})).status, 200);
}

TEST(QuotaTest, AnArrayCountsEachOfItsElements) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  config::AuthConfig auth = QuotaAuth();
  auth.quotas.max_pending_per_user = 3;
  h.Open(testing::TestCluster(), auth);
  // normal: max_pending_per_user 2; an array of 3 is refused whole, one of 2 fits.
  Reply over = h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"array", "1-3"}});
  EXPECT_EQ(over.status, 429) << over.body.dump();
  EXPECT_EQ(over.body["cause"]["adding"], 3);
  ASSERT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"array", "1-2"}})).status,
            200);
  over = h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}});
  EXPECT_EQ(over.status, 429) << over.body.dump();
  EXPECT_EQ(over.body["cause"]["waiting"], 2);
  // Its waiting elements count against the cluster-wide quota (3) in every queue too.
  ASSERT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"queue", "bf"}})).status,
            200);
  over = h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"queue", "bf"}});
  EXPECT_EQ(over.status, 429) << over.body.dump();
  EXPECT_TRUE(over.body["cause"]["queue"].is_null());
  EXPECT_EQ(over.body["cause"]["waiting"], 3);
  // bf's max_pending (3) counts every user's elements: bob's array of 3 does not fit.
  over =
      h.c().Submit(Caller{.user = "bob"}, {{"command", "true"}, {"queue", "bf"}, {"array", "0-2"}});
  EXPECT_EQ(over.status, 429) << over.body.dump();
  EXPECT_EQ(over.body["cause"]["limit"], "max_pending");
}

// Issue 48: one batch of 1,000 arrays x 1,000,000 elements was accepted and took the server to
// 10 GB. A request adds at most kMaxElementsPerRequest jobs and elements together; nothing of a
// refused request is kept.
TEST(QuotaTest, OneRequestAddsAtMostAMillionJobsAndElements) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const json big = {{"command", "true"}, {"array", "1-600000"}};
  Reply over = h.c().SubmitBatch(Caller{.user = "alice"}, {{"jobs", json::array({big, big})}});
  EXPECT_EQ(over.status, 413) << over.body.dump();
  EXPECT_NE(over.body.dump().find("jobs[1]: the request adds more than 1000000"),
            std::string::npos)
      << over.body.dump();
  EXPECT_EQ(Reply(h.c().SubmitBatch(Caller{.user = "alice"},
                                    {{"jobs", json::array({big, {{"command", "true"}}})}}))
                .status,
            200);
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}})).body["id"], 3);
}

// Issue 48: under the per-request cap a user could still loop requests of a million elements
// each; their elements not yet jobs are capped per user, by default and without job quotas.
TEST(QuotaTest, AUsersArrayElementsAreCappedAcrossRequests) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  config::AuthConfig auth = testing::TestAuth();
  ASSERT_TRUE(auth.quotas.empty());
  auth.quotas.max_array_elements_per_user = 10;
  h.Open(testing::TestCluster(), auth);
  const json six = {{"command", "true"}, {"array", "1-6"}, {"hold", true}};
  const JobId first = h.Submit("alice", six);
  Reply over = h.c().Submit(Caller{.user = "alice"}, six);
  EXPECT_EQ(over.status, 429) << over.body.dump();
  EXPECT_EQ(over.body["cause"]["limit"], "max_array_elements_per_user");
  EXPECT_EQ(over.body["cause"]["waiting"], 6);
  EXPECT_EQ(over.body["cause"]["adding"], 6);
  EXPECT_TRUE(over.body["cause"]["queue"].is_null());
  EXPECT_NE(over.body["error"].get<std::string>().find(
                "the cluster would hold 12 array elements not yet jobs of alice; "
                "quotas.max_array_elements_per_user is 10"),
            std::string::npos)
      << over.body.dump();
  // Plain jobs are not elements; another user has a cap of their own; a batch is refused whole.
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}})).status, 200);
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "bob"}, six)).status, 200);
  const json four = {{"command", "true"}, {"array", "1-4"}};
  EXPECT_EQ(Reply(h.c().SubmitBatch(Caller{.user = "alice"},
                                    {{"jobs", json::array({four, four})}}))
                .status,
            429);
  // Up to the cap fits; cancelled elements make room.
  ASSERT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, four)).status, 200);
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, six)).status, 429);
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, first)).status, 200);
  EXPECT_EQ(Reply(h.c().Submit(Caller{.user = "alice"}, six)).status, 200);
}

TEST(FieldLimitsTest, EveryStoredFieldHasAByteLimitNamedInTheError) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const std::string path(FieldLimits::kPathBytes + 1, 'p');
  json env = json::object();
  for (int i = 0; i < 5; ++i) env["V" + std::to_string(i)] = std::string(60'000, 'v');
  json many_args = json::array();
  for (size_t i = 0; i <= FieldLimits::kCommandArgs; ++i) many_args.push_back("a");
  struct Case {
    std::string name;
    json body;
    std::string field;
  } cases[] = {
      {"command", {{"command", std::string(FieldLimits::kCommandBytes + 1, 'c')}}, "job.command"},
      {"arguments", {{"command", many_args}}, "job.command"},
      {"name",
       {{"command", "x"}, {"name", std::string(FieldLimits::kNameBytes + 1, 'n')}},
       "job.name"},
      {"output", {{"command", "x"}, {"output", path}}, "job.output"},
      {"error", {{"command", "x"}, {"error", path}}, "job.error"},
      {"cwd", {{"command", "x"}, {"cwd", path}}, "job.cwd"},
      {"project", {{"command", "x"}, {"project", std::string(300, 'p')}}, "job.project"},
      {"depend",
       {{"command", "x"}, {"depend", std::string(FieldLimits::kDependBytes + 1, 'd')}},
       "job.depend"},
      {"env", {{"command", "x"}, {"env", env}}, "job.env"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Reply r = h.c().Submit(Caller{.user = "alice"}, c.body);
    EXPECT_EQ(r.status, 400) << r.body.dump().substr(0, 200);
    const std::string error = r.body.value("error", "");
    EXPECT_EQ(error.rfind(c.field + ":", 0), 0u) << error;
    EXPECT_NE(error.find("limit"), std::string::npos) << error;
  }
  // At the limit is fine; in a batch the error names the job.
  EXPECT_EQ(Reply(h.c()
                .Submit(Caller{.user = "alice"},
                        {{"command", "x"}, {"output", std::string(FieldLimits::kPathBytes, 'p')}}))
                .status,
            200);
  Reply batch = h.c().SubmitBatch(
      Caller{.user = "alice"},
      {{"jobs", json::array({{{"command", "x"}}, {{"command", "x"}, {"output", path}}})}});
  EXPECT_EQ(batch.status, 400);
  EXPECT_EQ(batch.body["error"].get<std::string>().rfind("jobs[1].output:", 0), 0u);
}

}  // namespace
}  // namespace sluice::server
