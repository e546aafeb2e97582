// The batched heartbeat (wire/agent_batch.h, server/agent_batch.cc, R-SCALE-1): each host's
// part means what its single heartbeat means — launches, RUNNING confirmations, exits and
// their acknowledgements — and a host's refusal is its own entry's.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;
using testing::Exited;

json Entry(const json& reply, const std::string& host) {
  for (const json& entry : reply["hosts"]) {
    if (entry["name"] == host) return entry;
  }
  return json();
}

std::vector<JobId> Launched(const json& reply, const std::string& host) {
  std::vector<JobId> ids;
  const json entry = Entry(reply, host);  // kept: a loop over a temporary's member dangles
  for (const json& l : entry["reply"]["launch"]) ids.push_back(l["job"].get<JobId>());
  return ids;
}

TEST(AgentBatchTest, EachHostsPartActsAsItsSingleHeartbeat) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  const JobId a = h.Submit("alice", {{"command", "a"}, {"tasks", 4}});
  const JobId b = h.Submit("alice", {{"command", "b"}, {"tasks", 4}});
  h.Cycle();
  const std::string host_a = h.Job(a)["hosts"][0]["name"];
  const std::string host_b = host_a == "h1" ? "h2" : "h1";
  const uint64_t epoch = h.c().epoch();
  // One host reports (nothing yet), the other only polls: both get their launch.
  Reply first =
      h.c().HeartbeatBatch({{"wait_ms", 0},
                            {"hosts", {{{"name", host_a}, {"heartbeat", {{"epoch", epoch}}}}}},
                            {"poll", {host_b}},
                            {"instance", ""}});
  ASSERT_EQ(first.status, 200) << first.body.dump();
  EXPECT_EQ(Launched(first.body, host_a), std::vector<JobId>{a});
  EXPECT_EQ(Launched(first.body, host_b), std::vector<JobId>{b});
  // Both report their job running, then a's end: RUNNING, then DONE and acknowledged.
  Reply running = h.c().HeartbeatBatch(
      {{"wait_ms", 0},
       {"hosts",
        {{{"name", host_a}, {"heartbeat", {{"epoch", epoch}, {"running", {a}}}}},
         {{"name", host_b}, {"heartbeat", {{"epoch", epoch}, {"running", {b}}}}}}}});
  ASSERT_EQ(running.status, 200) << running.body.dump();
  EXPECT_EQ(h.State(a), "RUNNING");
  EXPECT_EQ(h.State(b), "RUNNING");
  Reply ended = h.c().HeartbeatBatch(
      {{"wait_ms", 0},
       {"hosts", {{{"name", host_a}, {"heartbeat", {{"epoch", epoch}, {"exited", Exited(a)}}}}}},
       {"poll", {host_b}}});
  ASSERT_EQ(ended.status, 200);
  EXPECT_EQ(h.State(a), "DONE");
  EXPECT_EQ(Entry(ended.body, host_a)["reply"]["ack"], json::array({a}));
  EXPECT_EQ(h.State(b), "RUNNING");  // a poll says nothing about its jobs
}

// An administrator's new run limit for a running job (sluice modify) reaches a batched host
// as it reaches a single one: in its reply's run_limits, once.
TEST(AgentBatchTest, ARunningJobsNewRunLimitGoesOutInItsHostsEntry) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId id = h.Submit("alice", {{"command", "x"}, {"run_limit", 60}});
  h.Cycle();
  const uint64_t epoch = h.c().epoch();
  const json running = {{"wait_ms", 0},
                        {"hosts", {{{"name", "h1"}, {"heartbeat", {{"epoch", epoch}}}}}}};
  ASSERT_EQ(Launched(Reply(h.c().HeartbeatBatch(running)).body, "h1"), std::vector<JobId>{id});
  json report = running;
  report["hosts"][0]["heartbeat"]["running"] = {id};
  ASSERT_EQ(Reply(h.c().HeartbeatBatch(report)).status, 200);
  ASSERT_EQ(h.State(id), "RUNNING");
  ASSERT_EQ(Reply(h.c().Modify(Caller{.user = "root", .admin = true}, id, {{"run_limit", 600}})).status,
            200);
  const json entry = Entry(Reply(h.c().HeartbeatBatch(report)).body, "h1");
  ASSERT_EQ(entry["reply"]["run_limits"].size(), 1u) << entry.dump();
  EXPECT_EQ(entry["reply"]["run_limits"][0]["run_limit"], 600);
  EXPECT_TRUE(Entry(Reply(h.c().HeartbeatBatch(report)).body, "h1")["reply"]["run_limits"].empty());
}

TEST(AgentBatchTest, AHostsRefusalIsItsOwnEntry) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  Reply reply = h.c().HeartbeatBatch({{"wait_ms", 0},
                                      {"hosts", {{{"name", "h1"}, {"heartbeat", json::object()}}}},
                                      {"poll", {"h2"}}});
  ASSERT_EQ(reply.status, 200) << reply.body.dump();
  EXPECT_EQ(Entry(reply.body, "h1")["status"], 200);
  EXPECT_EQ(Entry(reply.body, "h2")["status"], 404);  // never registered: register first
  Reply other = h.c().HeartbeatBatch(
      {{"wait_ms", 0}, {"hosts", json::array()}, {"poll", {"h1"}}, {"instance", "another"}});
  EXPECT_EQ(Entry(other.body, "h1")["status"], 409);
  EXPECT_EQ(Reply(h.c().HeartbeatBatch({{"hosts", "h1"}})).status, 400);
}

int64_t LastHeartbeat(ControllerHarness& h, const std::string& host) {
  for (const json& entry : Reply(h.c().Hosts()).body) {
    if (entry["name"] == host) return entry["agent"]["last_heartbeat"].get<int64_t>();
  }
  return -1;
}

// A compact request gets entries only for the hosts with something in their answer; the
// others' leases are renewed all the same (their agent reads the absence as an empty answer).
TEST(AgentBatchTest, ACompactReplyLeavesOutTheEmptyAnswers) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  const JobId id = h.Submit("alice", {{"command", "x"}, {"tasks", 4}});
  h.Cycle();
  const std::string busy = h.Job(id)["hosts"][0]["name"];
  const std::string idle = busy == "h1" ? "h2" : "h1";
  h.Advance(30'000);
  Reply reply = h.c().HeartbeatBatch(
      {{"wait_ms", 0}, {"hosts", json::array()}, {"poll", {"h1", "h2"}}, {"compact", true}});
  ASSERT_EQ(reply.status, 200) << reply.body.dump();
  ASSERT_EQ(reply.body["hosts"].size(), 1u) << reply.body.dump();
  EXPECT_EQ(Launched(reply.body, busy), std::vector<JobId>{id});
  EXPECT_TRUE(Entry(reply.body, idle).is_null());
  EXPECT_EQ(LastHeartbeat(h, idle), LastHeartbeat(h, busy));  // both renewed now
  // Not compact: every host has its entry, empty or not.
  Reply full =
      h.c().HeartbeatBatch({{"wait_ms", 0}, {"hosts", json::array()}, {"poll", {"h1", "h2"}}});
  EXPECT_EQ(full.body["hosts"].size(), 2u);
  EXPECT_EQ(Entry(full.body, idle)["status"], 200);
}

// A polled host's jobs are looked at again within the rescan interval only when the host is
// marked: a cancel's kill goes out in the next poll even right after another.
TEST(AgentBatchTest, AMarkedHostIsLookedAtInEveryPoll) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId id = h.Submit("alice", {{"command", "x"}});
  h.Cycle();
  const json poll = {{"wait_ms", 0}, {"hosts", json::array()}, {"poll", {"h1"}}};
  ASSERT_EQ(Launched(Reply(h.c().HeartbeatBatch(poll)).body, "h1"), std::vector<JobId>{id});
  const json running = {{"wait_ms", 0},
                        {"hosts", {{{"name", "h1"}, {"heartbeat", {{"running", {id}}}}}}}};
  ASSERT_EQ(Reply(h.c().HeartbeatBatch(running)).status, 200);
  ASSERT_EQ(h.State(id), "RUNNING");
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, id)).status, 200);
  const json entry = Entry(Reply(h.c().HeartbeatBatch(poll)).body, "h1");  // same clock ms
  ASSERT_EQ(entry["reply"]["kill"].size(), 1u) << entry.dump();
  EXPECT_EQ(entry["reply"]["kill"][0]["job"], id);
}

}  // namespace
}  // namespace sluice::server
