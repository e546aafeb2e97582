// Reconfiguration at a site (R-OPS-3, issue 43), on a real server and agents: `sluice config
// check` validates a file as the controller loads it; `sluice admin reconfig` reloads the
// controller's file with a job running and another pending — a host and a queue added, a
// queue's limit changed — and nothing restarts: the running job goes on, the new queue takes
// jobs and runs them on the new host. A file with an error changes nothing, and the error
// names its line. A host the file drops while it runs a job is closed and drains: nothing new
// starts there, its job ends DONE with its whole output, then the host leaves.
// Every wait is on a condition, bounded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::WriteFile;

constexpr char kBefore[] = R"(
hosts:
  - name: h1
    slots: 1
queues:
  - name: normal
    policy: fifo
limits:
  - {name: user_slots, per_user: all, slots: 1}
)";

constexpr char kAfter[] = R"(
hosts:
  - name: h1
    slots: 1
  - name: h2
    slots: 2
queues:
  - name: normal
    policy: fifo
  - name: night
    policy: fifo
limits:
  - {name: user_slots, per_user: all, slots: 8}
)";

constexpr char kTwoHosts[] = R"(
hosts:
  - name: h1
    slots: 1
  - name: h2
    slots: 1
queues:
  - name: normal
    policy: fifo
)";

constexpr char kWithoutH2[] = R"(
hosts:
  - name: h1
    slots: 1
queues:
  - name: normal
    policy: fifo
)";

constexpr char kBroken[] = R"(
hosts:
  - name: h1
    slots: 1
queues:
  - name: normal
    policy: sometimes
)";

testing::ProcessResult ConfigCheck(const Cluster& c, const std::string& file) {
  std::filesystem::create_directories(c.dir() / "check");
  return testing::RunProcess({sluice::testing::SluiceBinary(), "config", "check", file},
                             c.dir() / "check", 60s);
}

std::vector<std::string> QueueNames(Cluster& c) {
  std::vector<std::string> names;
  for (const json& q : c.Get("/v1/queues")) names.push_back(q.value("name", ""));
  return names;
}

TEST(ConfigReloadTest, ConfigCheckSaysWhatIsWrongAndWhere) {
  Cluster c(DefaultClusterYaml(kBefore));
  const std::string good = (c.dir() / "cluster.yaml").string();
  testing::ProcessResult ok = ConfigCheck(c, good);
  EXPECT_EQ(ok.exit_code, 0) << ok.stderr_text;
  EXPECT_EQ(ok.stdout_text, good + ": ok: 1 hosts (1 slots), 1 queues\n");
  const std::string bad = (c.dir() / "broken.yaml").string();
  ASSERT_TRUE(WriteFile(bad, DefaultClusterYaml(kBroken)));
  testing::ProcessResult refused = ConfigCheck(c, bad);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.stderr_text.find("broken.yaml:7"), std::string::npos) << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("sometimes"), std::string::npos) << refused.stderr_text;
  EXPECT_EQ(ConfigCheck(c, (c.dir() / "missing.yaml").string()).exit_code, 1);
}

TEST(ConfigReloadTest, AReloadAddsAHostAndAQueueAndKeepsEveryJob) {
  Cluster c(DefaultClusterYaml(kBefore));
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  c.StartAgent("h1", 1);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; })) << c.Logs();
  testing::ProcessResult first = c.Cli({"submit", "--parsable", "--", "sleep", "60"});
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  const int64_t running = std::stoll(first.stdout_text);
  testing::ProcessResult second = c.Cli({"submit", "--parsable", "--", "true"});
  ASSERT_EQ(second.exit_code, 0) << second.stderr_text;
  const int64_t pending = std::stoll(second.stdout_text);
  ASSERT_TRUE(Eventually([&] { return c.JobState(running) == "RUNNING"; }, 60s)) << c.Logs();
  EXPECT_EQ(c.JobState(pending), "PENDING");
  // Not an administrator: refused.
  EXPECT_NE(c.Cli({"admin", "reconfig"}, "alice-token").exit_code, 0);

  ASSERT_TRUE(WriteFile(c.dir() / "cluster.yaml", DefaultClusterYaml(kAfter)));
  testing::ProcessResult reload = c.Cli({"admin", "reconfig"}, "admin-token");
  ASSERT_EQ(reload.exit_code, 0) << reload.stderr_text << c.Logs();
  EXPECT_EQ(reload.stdout_text, "configuration version 1 in force\n");
  EXPECT_EQ(QueueNames(c), (std::vector<std::string>{"normal", "night"}));
  EXPECT_EQ(c.HostState("h2"), "unavail");  // configured, no agent yet
  EXPECT_EQ(c.JobState(running), "RUNNING");
  EXPECT_EQ(c.JobState(pending), "PENDING");
  testing::ProcessResult night = c.Cli({"submit", "--parsable", "-q", "night", "--", "true"});
  ASSERT_EQ(night.exit_code, 0) << night.stderr_text;
  const int64_t night_job = std::stoll(night.stdout_text);
  // The new host's agent comes up: the new queue's job and the one pending run there.
  c.StartAgent("h2", 2);
  ASSERT_TRUE(c.WaitAllEnded({pending, night_job}, 60s)) << c.Logs();
  for (int64_t id : {pending, night_job}) {
    const json job = c.Job(id);
    EXPECT_EQ(job["state"], "DONE") << job.dump() << c.Logs();
    EXPECT_EQ(job["queue"], id == night_job ? "night" : "normal") << job.dump();
    ASSERT_FALSE(job["hosts"].empty()) << job.dump();
    EXPECT_EQ(job["hosts"][0]["name"], "h2") << job.dump();
  }
  EXPECT_EQ(c.JobState(running), "RUNNING");  // nothing restarted

  // A broken file changes nothing, and says where it is broken.
  ASSERT_TRUE(WriteFile(c.dir() / "cluster.yaml", DefaultClusterYaml(kBroken)));
  testing::ProcessResult refused = c.Cli({"admin", "reconfig"}, "admin-token");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.stderr_text.find("cluster.yaml:7"), std::string::npos) << refused.stderr_text;
  EXPECT_EQ(QueueNames(c), (std::vector<std::string>{"normal", "night"}));
  EXPECT_EQ(c.JobState(running), "RUNNING");
  EXPECT_EQ(c.Cli({"cancel", std::to_string(running)}, "alice-token").exit_code, 0);
}

namespace fs = std::filesystem;

std::vector<std::string> Lines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The per-host verdict of a pending job for `host` (GET /v1/jobs/ID `reasons.hosts`).
json Verdict(Cluster& c, int64_t id, const std::string& host) {
  const json job = c.Job(id);
  const json reasons = job.value("reasons", json::object());
  for (const json& v : reasons.value("hosts", json::array())) {
    if (v.value("host", "") == host) return v;
  }
  return json();
}

TEST(ConfigReloadTest, AHostDroppedWhileItRunsAJobClosesDrainsAndLeaves) {
  Cluster c(DefaultClusterYaml(kTwoHosts));
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  c.StartAgent("h1", 1);
  c.StartAgent("h2", 1);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok" && c.HostState("h2") == "ok"; }))
      << c.Logs();
  // h1 is held by a job that waits for `free_h1`; the counter runs on h2, 8 numbered lines,
  // and cannot end before `free_h2` exists (the reload happens while it runs).
  const fs::path free_h1 = c.dir() / "free_h1";
  const fs::path free_h2 = c.dir() / "free_h2";
  const fs::path output = c.dir() / "counter.out";
  auto submit = [&](const std::string& command, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"submit", "--parsable", "--cwd", c.dir().string()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", command});
    testing::ProcessResult r = c.Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return r.exit_code == 0 ? static_cast<int64_t>(std::stoll(r.stdout_text)) : int64_t{-1};
  };
  const int64_t blocker = submit("while [ ! -e " + free_h1.string() + " ]; do sleep 0.1; done");
  ASSERT_TRUE(Eventually([&] { return c.JobState(blocker) == "RUNNING"; }, 60s)) << c.Logs();
  ASSERT_EQ(c.Job(blocker)["hosts"][0]["name"], "h1") << c.Job(blocker).dump();
  const int64_t counter =
      submit("for i in 1 2 3 4 5 6 7 8; do echo $i; if [ $i -eq 4 ]; then while [ ! -e " +
                 free_h2.string() + " ]; do sleep 0.1; done; fi; done",
             {"-o", output.string()});
  ASSERT_TRUE(Eventually([&] { return Lines(output).size() >= 4; }, 60s)) << c.Logs();
  ASSERT_EQ(c.Job(counter)["hosts"][0]["name"], "h2") << c.Job(counter).dump();

  ASSERT_TRUE(WriteFile(c.dir() / "cluster.yaml", DefaultClusterYaml(kWithoutH2)));
  testing::ProcessResult reload = c.Cli({"admin", "reconfig"}, "admin-token");
  ASSERT_EQ(reload.exit_code, 0) << reload.stderr_text << c.Logs();
  EXPECT_EQ(c.HostState("h2"), "closed");
  testing::ProcessResult hosts = c.Cli({"hosts"});
  EXPECT_NE(hosts.stdout_text.find("Host h2 closed: removed from the configuration; drains"),
            std::string::npos)
      << hosts.stdout_text;
  EXPECT_EQ(c.JobState(counter), "RUNNING");

  // A new job does not start on h2: it waits, and says h2 is closed for the drain.
  const int64_t later = submit("true");
  ASSERT_TRUE(Eventually(
      [&] {
        return Verdict(c, later, "h2").value("reason", "") ==
               "removed from the configuration; drains";
      },
      60s))
      << c.Job(later).dump() << c.Logs();
  EXPECT_EQ(c.JobState(later), "PENDING");

  // The counter ends DONE with its whole output; then h2 leaves, and its agent is told so.
  std::ofstream(free_h2) << "go\n";
  ASSERT_TRUE(c.WaitAllEnded({counter}, 60s)) << c.Logs();
  EXPECT_EQ(c.JobState(counter), "DONE") << c.Job(counter).dump() << c.Logs();
  EXPECT_EQ(Lines(output), (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8"}));
  ASSERT_TRUE(Eventually([&] { return c.HostState("h2").empty(); }, 30s)) << c.Logs();
  EXPECT_EQ(c.Cli({"hosts"}).stdout_text.find("h2"), std::string::npos);
  EXPECT_TRUE(Eventually([&] { return !c.AgentRunning("h2"); }, 60s))
      << "the agent of the dropped host still runs\n"
      << c.Logs();
  // With exit status 2, which the unit's RestartPreventExitStatus keeps from restarting it
  // every RestartSec only to be refused again.
  EXPECT_EQ(c.AgentExitStatus("h2"), 2) << c.Logs();

  // The waiting job runs on h1 once it is free.
  std::ofstream(free_h1) << "go\n";
  ASSERT_TRUE(c.WaitAllEnded({blocker, later}, 60s)) << c.Logs();
  const json job = c.Job(later);
  EXPECT_EQ(job["state"], "DONE") << job.dump();
  EXPECT_EQ(job["hosts"][0]["name"], "h1") << job.dump();
}

}  // namespace
}  // namespace sluice::integration
