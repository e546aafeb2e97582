// Partition (R-SRV-3): an agent cut off from the controller longer than its lease kills its
// jobs itself, before the controller requeues them (lease + grace), so no job runs twice at
// once. The agent reaches the controller through a TCP proxy (tcp_proxy.h), which stops
// forwarding (silently drops bytes, like a partition) on demand.
#include <gtest/gtest.h>

#include <sstream>

#include "integration/cluster_harness.h"
#include "integration/tcp_proxy.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

struct RunLine {
  std::string what;  // start / stop
  int64_t job = 0;
  double time = 0;
  std::string hosts;
};

std::vector<RunLine> ReadRuns(const std::filesystem::path& path) {
  std::vector<RunLine> lines;
  std::istringstream in(testing::ReadFile(path).value_or(""));
  RunLine line;
  while (in >> line.what >> line.job >> line.time) {
    if (line.what == "start") in >> line.hosts;
    lines.push_back(line);
  }
  return lines;
}

// Whether the agent journal `journal` (agent/journal.h: one JSON object a line) holds an exit
// of `job` that the controller has not acknowledged yet: a report the agent still has to
// deliver. Compaction drops acknowledged exits, which reads as delivered too.
bool UnacknowledgedExit(const std::filesystem::path& journal, int64_t job) {
  bool pending = false;
  std::istringstream in(testing::ReadFile(journal).value_or(""));
  for (std::string line; std::getline(in, line);) {
    const json entry = json::parse(line, nullptr, false);
    if (!entry.is_object()) continue;
    if (entry.contains("exit") && entry["exit"] == job) pending = true;
    if (entry.contains("ack") && entry["ack"] == job) pending = false;
  }
  return pending;
}

constexpr char kHosts[] = R"(
hosts:
  - name: h[1-2]
    slots: 2
queues:
  - name: normal
    policy: fifo
    on_host_loss: requeue
)";

TEST(PartitionTest, ACutOffAgentKillsItsJobBeforeTheControllerRequeuesIt) {
  Cluster c(DefaultClusterYaml(kHosts));
  std::string error;
  // The fenced agent's SIGKILL follows its SIGTERM after 2 s, time enough for the job's trap to
  // record "stop" on a loaded machine (at 300 ms it was killed first, under stress-ng); the
  // controller's requeue comes after lease + grace = 7 s, well after that.
  ASSERT_TRUE(c.StartServer(&error, {"--lease-seconds", "2", "--host-loss-grace-seconds", "5"}))
      << error;
  TcpProxy proxy(c.port());
  c.StartAgent("h1", 2, "http://127.0.0.1:" + std::to_string(proxy.port()),
               {"--fence-grace-ms", "2000"});
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; }))
      << c.Get("/v1/hosts").dump() << c.Logs() << " server status " << c.server()->Wait(0ms);

  const std::string runs = (c.dir() / "runs").string();
  const std::string command = "echo start $SLUICE_JOB_ID $(date +%s.%N) $SLUICE_HOSTS >> " + runs +
                              "; trap 'echo stop $SLUICE_JOB_ID $(date +%s.%N) >> " + runs +
                              "; exit 143' TERM; sleep 60 & wait";
  json reply = c.Post("/v1/jobs", {{"command", command}, {"tasks", 2}});
  ASSERT_TRUE(reply.contains("id")) << reply.dump();
  const int64_t job = reply["id"];
  ASSERT_TRUE(Eventually([&] { return ReadRuns(runs).size() == 1; })) << c.Job(job).dump();
  c.StartAgent("h2", 2);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h2") == "ok"; }));

  proxy.Cut(true);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "unavail"; }, 20s))
      << c.Get("/v1/hosts").dump();
  // Requeued after lease + grace, it runs on h2.
  ASSERT_TRUE(Eventually([&] { return ReadRuns(runs).size() >= 3; }, 30s))
      << testing::ReadFile(runs).value_or("") << c.Job(job).dump();
  std::vector<RunLine> lines = ReadRuns(runs);
  ASSERT_EQ(lines.size(), 3u) << testing::ReadFile(runs).value_or("");
  EXPECT_EQ(lines[0].what, "start");
  EXPECT_TRUE(lines[0].hosts.starts_with("h1")) << lines[0].hosts;
  EXPECT_EQ(lines[1].what, "stop");   // killed by the fenced agent ...
  EXPECT_EQ(lines[2].what, "start");  // ... before the second run began
  EXPECT_TRUE(lines[2].hosts.starts_with("h2")) << lines[2].hosts;
  EXPECT_LT(lines[1].time, lines[2].time);
  // The fenced agent journaled the end of the run it killed (its state directory is the
  // harness's default, next to its work directory): a report it could not deliver yet.
  const std::filesystem::path journal = c.dir() / ".sluice-agent-h1" / "journal";
  ASSERT_TRUE(Eventually([&] { return UnacknowledgedExit(journal, job); }, 20s))
      << testing::ReadFile(journal).value_or("(no journal)");

  // The partition heals: h1 rejoins and its late report of the killed first run does not
  // disturb the second run.
  proxy.Cut(false);
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; }, 20s))
      << c.Get("/v1/hosts").dump() << c.Logs();
  ASSERT_TRUE(Eventually([&] { return !UnacknowledgedExit(journal, job); }, 20s))
      << "the late report was not delivered\n"
      << testing::ReadFile(journal).value_or("(no journal)") << c.Logs();
  json info = c.Job(job);
  EXPECT_EQ(info["state"], "RUNNING") << info.dump();
  ASSERT_FALSE(info["hosts"].empty());
  EXPECT_EQ(info["hosts"][0]["name"], "h2");
  EXPECT_EQ(ReadRuns(runs).size(), 3u);
  int status = 0;
  c.Post("/v1/jobs/" + std::to_string(job) + "/cancel", json::object(), "alice-token", &status);
  EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace sluice::integration
