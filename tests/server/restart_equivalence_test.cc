// R-SRV-2: a controller restarted from its state directory makes the same decisions for the
// same subsequent events as one that never stopped (restored jobs go through the same
// ingest path, with their sequences and admission records).
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;

// Jobs the controller has on `host` (its launching agent) that hold an allocation.
json HeldOn(ControllerHarness& h, const std::string& host) {
  json ids = json::array();
  for (const json& job : Reply(h.c().ListJobs({})).Json()) {
    const std::string state = job["state"];
    if ((state == "RUNNING" || state == "ADMITTING") && !job["hosts"].empty() &&
        job["hosts"][0]["name"] == host) {
      ids.push_back(job["id"]);
    }
  }
  return ids;
}

// Launches what the controller sends and reports it running, for both hosts.
void RunLaunches(ControllerHarness& h) {
  for (const char* host : {"h1", "h2"}) {
    h.Heartbeat(host);
    h.Heartbeat(host, HeldOn(h, host));
  }
}

void FinishOldest(ControllerHarness& h, int count) {
  for (const json& job : Reply(h.c().ListJobs({{"state", "RUNNING"}})).Json()) {
    if (count-- == 0) break;
    h.Heartbeat(job["hosts"][0]["name"].get<std::string>(), json::array(),
                Exited(job["id"].get<JobId>(), 0));
  }
}

void Before(ControllerHarness& h) {
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  h.Submit("alice", {{"command", "a"}, {"tasks", 5}, {"queue", "bf"}, {"run_limit", 100}});
  h.Submit("alice", {{"command", "head"}, {"tasks", 7}, {"queue", "bf"}, {"run_limit", 100}});
  for (int i = 0; i < 6; ++i) {
    h.Submit("bob", {{"command", "s"},
                     {"tasks", 1 + i % 2},
                     {"queue", i % 3 == 0 ? "normal" : "bf"},
                     {"run_limit", 50}});
  }
  // (An impossible job is refused at submission now, R-UX-2: a held one takes its id.)
  h.Submit("alice", {{"command", "never"}, {"tasks", 1}, {"hold", true}});
  h.Cycle();
  RunLaunches(h);
  h.Advance(5'000);
  FinishOldest(h, 1);
  h.Cycle();
  RunLaunches(h);
  h.Submit("bob", {{"command", "late"}, {"tasks", 2}, {"queue", "bf"}});
  h.Submit("bob", {{"command", "held"}, {"hold", true}});
  h.Advance(1'000);
  h.Cycle();  // leaves ADMITTING records behind: launches not yet sent
}

// What happens after the (possible) restart: agents (re-)register with what they run, then
// the same events for both controllers.
std::vector<std::string> After(ControllerHarness& h) {
  json on_h1 = HeldOn(h, "h1");
  json on_h2 = HeldOn(h, "h2");
  h.c().RecordDecisions(true);
  EXPECT_EQ(h.Register("h1", on_h1).status, 200);
  EXPECT_EQ(h.Register("h2", on_h2).status, 200);
  for (int round = 0; round < 6; ++round) {
    h.Advance(7'000);
    h.Cycle();
    RunLaunches(h);
    FinishOldest(h, 2);
    h.Submit("carol",
             {{"command", "r"}, {"tasks", 1 + round % 3}, {"queue", round % 2 ? "bf" : "normal"}});
    if (round == 2) {
      EXPECT_EQ(Reply(h.c().Hold(Caller{.user = "bob"}, 11, false)).status, 200);
    }
  }
  h.Cycle();
  std::vector<std::string> out = h.c().RecordedDecisions();
  for (const json& job : Reply(h.c().ListJobs({})).Json()) {
    json detail = h.Job(job["id"]);
    out.push_back(std::to_string(job["id"].get<JobId>()) + " " + job["state"].get<std::string>() +
                  " seq=" + detail["admission"]["seq"].dump() +
                  " bypass=" + detail["admission"]["bypass_count"].dump() +
                  " first_blocked=" + detail["admission"]["first_blocked"].dump() + " gate_since=" +
                  detail["admission"]["gate_since"].dump() + " hosts=" + job["hosts"].dump());
  }
  return out;
}

TEST(RestartEquivalenceTest, ARestartedControllerDecidesAsOneThatNeverStopped) {
  TempDir dir_a;
  TempDir dir_b;
  ControllerHarness a(dir_a.path().string());
  ControllerHarness b(dir_b.path().string());
  a.Open();
  b.Open();
  Before(a);
  Before(b);
  a.Close();  // as a crash leaves it: only committed state remains
  a.Open();
  const std::vector<std::string> restarted = After(a);
  const std::vector<std::string> continuous = After(b);
  ASSERT_EQ(restarted.size(), continuous.size());
  for (size_t i = 0; i < restarted.size(); ++i) {
    EXPECT_EQ(restarted[i], continuous[i]) << "line " << i;
  }
  // The scenario exercised what it is meant to: a head gated before the restart (bypass
  // count and gate restored) that still holds later jobs back after it, and new starts.
  std::string all;
  for (const std::string& line : continuous) all += line + "\n";
  EXPECT_NE(all.find("GATED"), std::string::npos) << all;
  EXPECT_NE(all.find("2 DONE seq=2 bypass=2"), std::string::npos) << all;
  EXPECT_NE(all.find("start "), std::string::npos) << all;
}

}  // namespace
}  // namespace sluice::server
