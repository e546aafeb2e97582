// Agents restart without killing jobs (issue 43): a batch job survives a SIGTERM (a `systemctl
// restart`) or a SIGKILL of its agent followed by a new start, and ends DONE once with its
// whole output; an agent kept down past the controller's absence + grace gets its job
// requeued once, and the old run does not go on beside the new one (its shepherd killed it
// at the lease's end); `--kill-jobs-on-stop` ends jobs with a message saying the agent
// stopped. Real server and agent on loopback; every wait is on a condition, bounded.
// Needs root (the agent switches jobs to nobody); skipped with a printed reason otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "integration/cluster_harness.h"
#include "testing/proc_scan.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;
using sluice::testing::ProcessesMentioning;

// The job writes one line a quarter second, and after line kHold waits for the test's
// `release` file: it cannot end while the test restarts its agent.
constexpr int kLines = 12;
constexpr int kHold = 6;

std::vector<std::string> Lines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Counted(int from, int to) {
  std::vector<std::string> lines;
  for (int i = from; i <= to; ++i) lines.push_back(std::to_string(i));
  return lines;
}

class AgentRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the agent switches jobs to nobody";
    cluster_ = std::make_unique<Cluster>(DefaultClusterYaml(R"(
hosts:
  - {name: h1, slots: 2}
queues:
  - {name: normal, policy: fifo, on_host_loss: requeue}
)"));
    std::string error;
    // Host unavail after 2 s of silence; jobs requeued after the absence (6 s) + grace (2 s):
    // the window in which a restarted agent adopts them.
    ASSERT_TRUE(cluster_->StartServer(&error, {"--lease-seconds", "2", "--host-loss-grace-seconds",
                                               "2", "--agent-absence-seconds", "6"}))
        << error;
    c().StartAgent("h1", 2);
    ASSERT_TRUE(Eventually([&] { return c().HostState("h1") == "ok"; }, 20s)) << c().Logs();
  }

  // A job that notes its start in `starts` and writes kLines numbered lines to its output.
  int64_t SubmitCounter() {
    const std::string command = "echo start >> " + starts().string() + "; for i in $(seq 1 " +
                                std::to_string(kLines) + "); do echo $i; if [ $i -eq " +
                                std::to_string(kHold) + " ]; then while [ ! -e " +
                                release().string() + " ]; do sleep 0.1; done; fi; sleep 0.25; done";
    testing::ProcessResult result = c().Cli({"submit", "--parsable", "--cwd", c().dir().string(),
                                             "-o", output().string(), "--", command});
    EXPECT_EQ(result.exit_code, 0) << result.stderr_text;
    return result.exit_code == 0 ? std::stoll(result.stdout_text) : -1;
  }

  // Waits until the job runs and has written a few lines.
  void WaitWriting(int64_t id) {
    ASSERT_TRUE(Eventually(
        [&] { return c().JobState(id) == "RUNNING" && Lines(output()).size() >= 2; }, 20s))
        << c().Job(id).dump() << c().Logs();
  }

  // The job goes on (writing, up to its hold) while no agent runs.
  void ExpectRunningWithoutAgent(int64_t id) {
    const size_t seen = Lines(output()).size();
    EXPECT_TRUE(Eventually(
        [&] {
          const size_t now = Lines(output()).size();
          return now > seen || now == static_cast<size_t>(kHold);
        },
        10s))
        << "the job stopped writing when its agent stopped\n"
        << c().Job(id).dump() << c().Logs();
    EXPECT_FALSE(ProcessesMentioning(release().string()).empty()) << "the job died with its agent\n"
                                                                  << c().Logs();
  }

  void ExpectDoneOnceWithAllItsOutput(int64_t id) {
    ASSERT_TRUE(c().WaitAllEnded({id}, 30s)) << c().Job(id).dump() << c().Logs();
    const json job = c().Job(id);
    EXPECT_EQ(job["state"], "DONE") << job.dump() << c().Logs();
    EXPECT_EQ(job["exit_code"], 0) << job.dump();
    EXPECT_FALSE(job.contains("requeues")) << job.dump();
    EXPECT_EQ(Lines(starts()).size(), 1u) << "the job ran twice\n" << c().Logs();
    EXPECT_EQ(Lines(output()), Counted(1, kLines)) << c().Logs();
  }

  fs::path output() const { return cluster_->dir() / "counter.out"; }
  fs::path starts() const { return cluster_->dir() / "starts"; }
  fs::path release() const { return cluster_->dir() / "release"; }
  void Release() { std::ofstream(release()) << "go\n"; }
  // The restarted agent has adopted the job (before the job may end).
  void WaitAdopted() {
    ASSERT_TRUE(Eventually(
        [&] { return c().Logs().find("adopted 1 running job") != std::string::npos; }, 20s))
        << c().Logs();
  }
  Cluster& c() { return *cluster_; }
  std::unique_ptr<Cluster> cluster_;
};

TEST_F(AgentRestartTest, AJobSurvivesASigtermAndStartOfItsAgentAndEndsDoneOnce) {
  const int64_t id = SubmitCounter();
  WaitWriting(id);
  c().StopAgent("h1", SIGTERM);
  ASSERT_FALSE(c().AgentRunning("h1"));
  ExpectRunningWithoutAgent(id);
  EXPECT_EQ(c().JobState(id), "RUNNING") << "a job was failed for a restarting agent";
  // The controller was told: `sluice hosts` shows the agent restarting.
  EXPECT_TRUE(Eventually([&] {
    const json hosts = c().Get("/v1/hosts");
    return hosts.is_array() && !hosts.empty() &&
           hosts[0].value("agent", json::object()).value("restarting", false);
  })) << c().Get("/v1/hosts").dump();
  EXPECT_NE(c().Cli({"hosts"}).stdout_text.find("restarting"), std::string::npos);
  EXPECT_NE(c().Logs().find("stopping for a restart"), std::string::npos) << c().Logs();

  c().StartAgent("h1", 2);
  WaitAdopted();
  Release();
  ExpectDoneOnceWithAllItsOutput(id);
}

TEST_F(AgentRestartTest, AJobSurvivesASigkillAndStartOfItsAgentAndEndsDoneOnce) {
  const int64_t id = SubmitCounter();
  WaitWriting(id);
  c().StopAgent("h1", SIGKILL);
  ExpectRunningWithoutAgent(id);
  c().StartAgent("h1", 2);
  WaitAdopted();
  Release();
  ExpectDoneOnceWithAllItsOutput(id);
}

// Down past absence + grace: the shepherd kills the job at the lease's end (before the
// controller requeues it), the job is requeued once and runs again from its start once the
// host is back; nothing of the first run is written after that run was killed.
TEST_F(AgentRestartTest, AJobWhoseAgentStaysDownPastTheLeaseIsRequeuedOnceAndNotRunTwice) {
  const int64_t id = SubmitCounter();
  WaitWriting(id);
  c().StopAgent("h1", SIGKILL);
  ASSERT_TRUE(Eventually([&] { return c().Job(id).value("requeues", 0) == 1; }, 30s))
      << c().Job(id).dump() << c().Logs();
  const std::vector<std::string> first = Lines(output());
  EXPECT_EQ(first, Counted(1, static_cast<int>(first.size())));
  EXPECT_LE(first.size(), static_cast<size_t>(kHold));

  EXPECT_TRUE(Eventually([&] { return ProcessesMentioning(release().string()).empty(); }, 10s))
      << "the first run still runs after its requeue";
  Release();  // the old run would go on now if its shepherd had not killed it
  c().StartAgent("h1", 2);
  ASSERT_TRUE(c().WaitAllEnded({id}, 30s)) << c().Job(id).dump() << c().Logs();
  const json job = c().Job(id);
  EXPECT_EQ(job["state"], "DONE") << job.dump();
  EXPECT_EQ(job["requeues"], 1) << job.dump();
  EXPECT_EQ(Lines(starts()).size(), 2u) << c().Logs();
  std::vector<std::string> expected = first;
  for (const std::string& line : Counted(1, kLines)) expected.push_back(line);
  EXPECT_EQ(Lines(output()), expected) << "the first run wrote on after its requeue\n"
                                       << c().Logs();
}

TEST_F(AgentRestartTest, AnAgentStoppedWithKillJobsOnStopEndsItsJobsSayingWhy) {
  c().StopAgent("h1", SIGTERM);
  c().StartAgent("h1", 2, "", {"--kill-jobs-on-stop"});
  ASSERT_TRUE(Eventually([&] { return c().HostState("h1") == "ok"; }, 20s)) << c().Logs();
  const int64_t id = SubmitCounter();
  WaitWriting(id);
  c().StopAgent("h1", SIGTERM);
  ASSERT_TRUE(c().WaitAllEnded({id}, 20s)) << c().Job(id).dump() << c().Logs();
  const json job = c().Job(id);
  EXPECT_EQ(job["state"], "EXIT") << job.dump();
  EXPECT_NE(job.value("message", "").find("agent of host h1 stopped"), std::string::npos)
      << job.dump();
  EXPECT_LE(Lines(output()).size(), static_cast<size_t>(kHold));
}

}  // namespace
}  // namespace sluice::integration
