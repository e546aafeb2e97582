// Reconfiguration at a site (R-OPS-3, issue 43), on a real server and agent: `sluice config
// check` validates a file as the controller loads it; `sluice admin reconfig` reloads the
// controller's file with a job running and another pending — a host and a queue added, a
// queue's limit changed — and nothing restarts: the running job goes on, the new queue takes
// jobs. A file with an error changes nothing, and the error names its line.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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
  EXPECT_EQ(night.exit_code, 0) << night.stderr_text;

  // A broken file changes nothing, and says where it is broken.
  ASSERT_TRUE(WriteFile(c.dir() / "cluster.yaml", DefaultClusterYaml(kBroken)));
  testing::ProcessResult refused = c.Cli({"admin", "reconfig"}, "admin-token");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.stderr_text.find("cluster.yaml:7"), std::string::npos) << refused.stderr_text;
  EXPECT_EQ(QueueNames(c), (std::vector<std::string>{"normal", "night"}));
  EXPECT_EQ(c.JobState(running), "RUNNING");
  EXPECT_EQ(c.Cli({"cancel", std::to_string(running)}, "alice-token").exit_code, 0);
}

}  // namespace
}  // namespace sluice::integration
