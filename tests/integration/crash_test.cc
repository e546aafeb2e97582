// Crash test (R-SRV-1, R-SRV-2): while a client submits ~2,000 short jobs into a fifo queue
// and a bounded_backfill queue (whose big head gets bypassed, then gated), the server is
// SIGKILLed at seeded random moments and restarted on the same state directory. Afterwards:
// every acknowledged job exists; every job that started ran exactly once (each appends its
// id to a file); the fifo queue's committed admission order is the submission order; and the
// gated head's bypass count, first-blocked time and gate state read right before a kill are
// identical right after the restart.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "integration/cluster_harness.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr char kHosts[] = R"(
hosts:
  - name: h[1-3]
    slots: 8
queues:
  - name: fifo
    policy: fifo
    priority: 20
  - name: bf
    policy: bounded_backfill
    max_bypass: 10
    max_head_wait: 3600
    priority: 10
default_queue: fifo
)";

constexpr int kJobs = 2000;

json Snapshot(const json& job) {
  const json& a = job["admission"];
  return {{"bypass_count", a["bypass_count"]},
          {"first_blocked", a["first_blocked"]},
          {"gate", a["gate"]},
          {"gate_active", a["gate_active"]},
          {"seq", a["seq"]}};
}

TEST(CrashTest, KilledServerLosesNothingAndRunsNothingTwice) {
  Cluster c(DefaultClusterYaml(kHosts));
  std::string error;
  ASSERT_TRUE(c.StartServer(&error, {"--lease-seconds", "10", "--host-loss-grace-seconds", "5"}))
      << error;
  for (const char* name : {"h1", "h2", "h3"}) c.StartAgent(name, 8);
  ASSERT_TRUE(Eventually([&] {
    json hosts = c.Get("/v1/hosts");
    int ok = 0;
    for (const json& host : hosts) ok += host.value("state", "") == "ok";
    return ok == 3;
  }));
  const std::string runs = (c.dir() / "runs").string();
  const std::string record = "echo $SLUICE_JOB_ID >> " + runs;

  // The bounded_backfill head: fillers hold 16 of the 24 slots for a while, the head needs
  // all 24, and small jobs behind it backfill until max_bypass, then the gate closes.
  std::vector<int64_t> acked;
  std::map<int64_t, std::string> queue_of;
  for (int i = 0; i < 4; ++i) {
    json reply =
        c.Post("/v1/jobs", {{"command", record + "; sleep 10"}, {"queue", "bf"}, {"tasks", 4}});
    ASSERT_TRUE(reply.contains("id")) << reply.dump();
    acked.push_back(reply["id"]);
    queue_of[reply["id"]] = "bf";
  }
  ASSERT_TRUE(Eventually([&] { return c.JobState(acked.back()) == "RUNNING"; }));
  json head_reply = c.Post("/v1/jobs", {{"command", record}, {"queue", "bf"}, {"tasks", 24}});
  ASSERT_TRUE(head_reply.contains("id")) << head_reply.dump();
  const int64_t head = head_reply["id"];
  acked.push_back(head);
  queue_of[head] = "bf";

  // The submitter: single acknowledged submissions; a failed request is not acknowledged
  // (it may or may not exist) and the client moves on.
  std::mutex mu;
  std::atomic<bool> done{false};
  std::atomic<int> unacknowledged{0};
  std::thread submitter([&] {
    std::mt19937 shapes(11);
    httplib::Client client(c.url());
    client.set_bearer_token_auth("alice-token");
    client.set_connection_timeout(1s);
    client.set_read_timeout(10s);
    for (int i = 0; i < kJobs; ++i) {
      const bool to_bf = i % 3 == 0;
      const int tasks = 1 << (shapes() % 3);  // 1, 2 or 4
      json body = {{"command", record}, {"queue", to_bf ? "bf" : "fifo"}, {"tasks", tasks}};
      httplib::Result result = client.Post("/v1/jobs", body.dump(), "application/json");
      if (result && result->status == 201) {
        const int64_t id = json::parse(result->body)["id"];
        std::lock_guard lock(mu);
        acked.push_back(id);
        queue_of[id] = to_bf ? "bf" : "fifo";
      } else {
        ++unacknowledged;
        std::this_thread::sleep_for(20ms);
      }
    }
    done = true;
  });

  // Kill 1: once the head's gate is active, read it, kill, restart, read it again.
  json before;
  ASSERT_TRUE(Eventually(
      [&] {
        json job = c.Job(head);
        if (!job.is_object() || !job.contains("admission")) return false;
        before = Snapshot(job);
        return before["gate_active"] == true;
      },
      30s))
      << c.Job(head).dump();
  c.KillServer(SIGKILL);
  ASSERT_TRUE(c.StartServer(&error)) << error;
  json head_after = c.Job(head);
  json after = Snapshot(head_after);
  EXPECT_EQ(before, after) << "the gated head changed across a SIGKILL";
  EXPECT_EQ(head_after["state"], "PENDING") << "the head started around the kill: " << head_after;

  // Kills 2..4 at seeded random moments while submissions go on.
  std::mt19937 moments(2024);
  std::uniform_int_distribution<int> pause_ms(300, 1500);
  for (int kill = 0; kill < 3 && !done; ++kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(moments)));
    c.KillServer(SIGKILL);
    ASSERT_TRUE(c.StartServer(&error)) << error;
  }
  submitter.join();
  ASSERT_GT(acked.size(), static_cast<size_t>(kJobs) / 2) << unacknowledged << " unacknowledged";

  // Every acknowledged job exists and ends (at the machine's pace: waited for while jobs keep
  // ending); each ran exactly once.
  ASSERT_TRUE(c.WaitAllEndedWhileProgressing(acked, 60s))
      << c.EndedCount(acked) << " of " << acked.size() << " jobs ended, none more in 60 s\n"
      << c.Logs();
  json jobs = c.Get("/v1/jobs");
  ASSERT_TRUE(jobs.is_array());
  std::map<int64_t, json> by_id;
  for (const json& job : jobs) by_id[job["id"]] = job;
  std::map<int64_t, int> ran;
  std::istringstream lines(testing::ReadFile(runs).value_or(""));
  for (int64_t id; lines >> id;) ++ran[id];
  for (int64_t id : acked) {
    ASSERT_TRUE(by_id.contains(id)) << "acknowledged job " << id << " is lost";
    EXPECT_EQ(by_id[id]["state"], "DONE") << by_id[id].dump();
  }
  for (const auto& [id, count] : ran) {
    EXPECT_EQ(count, 1) << "job " << id << " ran " << count << " times";
    ASSERT_TRUE(by_id.contains(id)) << "job " << id << " ran but does not exist";
  }
  for (const auto& [id, job] : by_id) {
    if (job["state"] == "DONE") {
      EXPECT_EQ(ran[id], 1) << "job " << id << " is DONE but did not run";
    }
  }

  // fifo: the committed admission order (sequence) is the submission order.
  int64_t last_seq = -1;
  int checked = 0;
  for (const auto& [id, queue] : queue_of) {
    if (queue != "fifo") continue;
    ++checked;
    json job = c.Job(id);
    const int64_t seq = job["admission"]["seq"];
    EXPECT_GT(seq, last_seq) << "job " << id;
    last_seq = seq;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace sluice::integration
