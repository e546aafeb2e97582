// The dashboard overview's numbers (GET /v1/stats "now", issue 47.9) agree with each other:
// the cards, the jobs-by-state and pending-by-reason tables, the queue rows and the users'
// usage are read from one count, with each array element a job.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "server/controller_fixture.h"
#include "server/stats_sampler.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;
using testing::LaunchedIds;

class StatsCountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.Open();
    ASSERT_EQ(h_.Register("h1").status, 200);
    ASSERT_EQ(h_.Register("h2").status, 200);
  }
  StatsSample Now() {
    StatsSample now;
    h_.c().SampleStats(now, true);
    return now;
  }

  sluice::testing::TempDir dir_;
  ControllerHarness h_{dir_.path().string()};
};

TEST_F(StatsCountsTest, CardsTablesQueuesAndUsersAgree) {
  // alice: one job over both hosts (6 slots: h1 4 + h2 2) and one of 2 slots, running;
  // an array of 5 elements and a plain job that wait; bob: one held job.
  const JobId wide = h_.Submit("alice", {{"command", "x"}, {"tasks", 6}});
  const JobId narrow = h_.Submit("alice", {{"command", "x"}, {"tasks", 2}});
  h_.Cycle();
  h_.Submit("alice", {{"command", "x"}, {"array", "1-5"}});
  h_.Submit("alice", {{"command", "x"}, {"tasks", 3}});
  h_.Submit("bob", {{"command", "x"}, {"hold", true}});
  h_.Cycle();
  // Both running jobs are confirmed by the agents of their launch hosts.
  std::map<std::string, json> running;
  for (JobId id : {wide, narrow}) {
    const std::string host = h_.Job(id)["hosts"][0]["name"].get<std::string>();
    running.try_emplace(host, json::array()).first->second.push_back(id);
  }
  for (const auto& [host, ids] : running) h_.Heartbeat(host, ids);
  ASSERT_EQ(h_.State(wide), "RUNNING");
  ASSERT_EQ(h_.State(narrow), "RUNNING");

  const StatsSample now = Now();
  EXPECT_EQ(now.running, 2);
  EXPECT_EQ(now.admitting, 0);
  EXPECT_EQ(now.pending, 6);  // 5 elements and one job, not the array's own record
  EXPECT_EQ(now.held, 1);
  EXPECT_EQ(now.jobs_by_state.at("RUNNING"), now.running);
  EXPECT_EQ(now.jobs_by_state.at("PENDING"), now.pending);
  EXPECT_EQ(now.jobs_by_state.at("HELD"), now.held);
  int64_t by_reason = 0;
  for (const auto& [reason, n] : now.pending_by_reason) by_reason += n;
  EXPECT_EQ(by_reason, now.pending);
  EXPECT_FALSE(now.pending_by_reason.contains("HELD"));
  int64_t queue_running = 0, queue_pending = 0, queue_held = 0;
  for (const QueueSample& q : now.queues) {
    queue_running += q.running;
    queue_pending += q.pending;
    queue_held += q.held;
  }
  EXPECT_EQ(queue_running, now.running);
  EXPECT_EQ(queue_pending, now.pending);
  EXPECT_EQ(queue_held, now.held);
  EXPECT_EQ(now.used_slots, 8);
  // GET /v1/queues counts pending and held jobs the same way.
  const json queues = Reply(h_.c().Queues()).body;
  int64_t listed_pending = 0, listed_held = 0, listed_running = 0;
  for (const json& q : queues) {
    listed_pending += q["pending"].get<int64_t>();
    listed_held += q["held"].get<int64_t>();
    listed_running += q["running"].get<int64_t>();
  }
  EXPECT_EQ(listed_running, now.running) << queues.dump();
  EXPECT_EQ(listed_pending, now.pending) << queues.dump();
  EXPECT_EQ(listed_held, now.held) << queues.dump();
  ASSERT_TRUE(now.users.contains("alice"));
  EXPECT_EQ(now.users.at("alice"), (UserSample{.running = 2, .pending = 6, .slots = 8}));
  EXPECT_EQ(now.users.at("bob"), (UserSample{.held = 1}));

  // A periodic sample (without the tables) has the same numbers.
  StatsSample periodic;
  h_.c().SampleStats(periodic, false);
  EXPECT_EQ(periodic.running, now.running);
  EXPECT_EQ(periodic.pending, now.pending);
  EXPECT_EQ(periodic.held, now.held);
  EXPECT_TRUE(periodic.jobs_by_state.empty());
  EXPECT_TRUE(periodic.users.empty());
}

TEST_F(StatsCountsTest, PlacedJobsAreStartingUntilTheirAgentsConfirm) {
  const JobId job = h_.Submit("alice", {{"command", "x"}, {"tasks", 2}});
  h_.Cycle();
  ASSERT_EQ(h_.State(job), "ADMITTING");
  StatsSample now = Now();
  EXPECT_EQ(now.admitting, 1);
  EXPECT_EQ(now.running, 1);  // it holds its allocation, as the queue's running count says
  EXPECT_EQ(now.queues[0].running, 1);
  EXPECT_EQ(Reply(h_.c().Queues()).body[0]["running"], 1);
  EXPECT_EQ(now.pending, 0);
  EXPECT_EQ(now.users.at("alice").slots, 2);  // a starting job holds its slots
}

TEST_F(StatsCountsTest, UsersWithOnlyEndedJobsAreNotListed) {
  const JobId job = h_.Submit("carol", {{"command", "x"}});
  h_.Cycle();
  const json reply = h_.Heartbeat("h1", json::array());
  std::string host = "h1";
  if (LaunchedIds(reply).empty()) host = "h2";
  h_.Heartbeat(host, json::array(), testing::Exited(job, 0));
  ASSERT_EQ(h_.State(job), "DONE");
  const StatsSample now = Now();
  EXPECT_FALSE(now.users.contains("carol"));
  EXPECT_EQ(now.jobs_by_state.at("DONE"), 1);
}

}  // namespace
}  // namespace sluice::server
