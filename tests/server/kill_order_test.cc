// Kill escalation (issue 19): cancelling a job that ignores SIGTERM made a kill loop — a kill
// order in every long-poll reply, so the poll returned at once and the agent asked again
// (25,816 log lines and 2.7 s of server CPU in 5 s). A kill order now goes out once, and
// again only after the relaunch interval (a reply may have been lost); the agent sends one
// TERM, then one KILL after the grace (tests/agent/job_runner_test.cc).
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;
using testing::KilledIds;
using testing::LaunchedIds;

TEST(KillOrderTest, AKillOrderIsNotRepeatedInEveryReply) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  const JobId a = h.Submit("alice", {{"command", "a"}, {"tasks", 4}});
  h.Cycle();
  const std::string host = h.Job(a)["hosts"][0]["name"];
  ASSERT_EQ(LaunchedIds(h.Heartbeat(host)), std::vector<JobId>{a});
  h.Heartbeat(host, {a});
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, a)).status, 200);
  EXPECT_EQ(KilledIds(h.Heartbeat(host, {a})), std::vector<JobId>{a});
  // The job ignores SIGTERM and keeps running: the next replies carry no order.
  for (int i = 0; i < 5; ++i) {
    h.Advance(100);
    EXPECT_TRUE(KilledIds(h.Heartbeat(host, {a})).empty()) << i;
  }
  // After the relaunch interval the order goes out again, once.
  h.Advance(3000);
  EXPECT_EQ(KilledIds(h.Heartbeat(host, {a})), std::vector<JobId>{a});
  EXPECT_TRUE(KilledIds(h.Heartbeat(host, {a})).empty());
}

}  // namespace
}  // namespace sluice::server
