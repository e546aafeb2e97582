// Exactly once across agent crashes (issue 19): an agent SIGKILLed after its job exited but
// before the exit was acknowledged reports the exit after its restart (from its journal), and
// the job is DONE once and never runs again; an agent SIGKILLed while a job without cgroups
// runs kills that job's leftovers (a `setsid` child out of the job's process group) before it
// registers again, and the job is requeued and run again by the protocol (host loss: requeue).
// Real server and agents on loopback; bounded waits; the job processes are found in /proc.
// Needs root (the agent switches jobs to nobody); skipped with a printed reason otherwise.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "integration/cluster_harness.h"
#include "testing/proc_scan.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using sluice::testing::ProcessesMentioning;
using sluice::testing::ProcessesRunning;
using namespace std::chrono_literals;

size_t Lines(const fs::path& file) {
  std::ifstream in(file);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

class ExactlyOnceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the agent switches jobs to nobody";
    cluster_ = std::make_unique<Cluster>(DefaultClusterYaml(R"(
hosts:
  - {name: h1, slots: 2}
queues:
  - {name: normal, policy: fifo}
)"));
    std::string error;
    ASSERT_TRUE(cluster_->StartServer(&error)) << error;
  }

  int64_t Submit(const std::string& command) {
    testing::ProcessResult result =
        c().Cli({"submit", "--parsable", "--cwd", c().dir().string(), "--", command});
    EXPECT_EQ(result.exit_code, 0) << result.stderr_text;
    return result.exit_code == 0 ? std::stoll(result.stdout_text) : -1;
  }

  Cluster& c() { return *cluster_; }
  std::unique_ptr<Cluster> cluster_;
};

// The agent SIGKILLs itself right after journaling the exit (SLUICE_AGENT_FAULT), so the
// controller never heard of it; the restarted agent reports it.
TEST_F(ExactlyOnceTest, AnExitNotYetReportedWhenTheAgentDiedIsReportedOnceAfterItsRestart) {
  c().StartAgent("h1", 2, "", {}, {"SLUICE_AGENT_FAULT=crash-after-exit-journaled"});
  ASSERT_TRUE(Eventually([&] { return c().HostState("h1") == "ok"; }, 20s)) << c().Logs();
  const fs::path done = c().dir() / "completions";
  const int64_t id = Submit("echo ran >> " + done.string());
  ASSERT_TRUE(Eventually([&] { return !c().AgentRunning("h1"); }, 20s))
      << "the agent did not stop at the fault\n"
      << c().Logs();
  EXPECT_EQ(Lines(done), 1u);
  EXPECT_NE(c().JobState(id), "DONE") << "the exit was reported before the crash: a weak test";

  c().StartAgent("h1", 2);
  ASSERT_TRUE(c().WaitAllEnded({id}, 20s)) << c().Job(id).dump() << c().Logs();
  const json job = c().Job(id);
  EXPECT_EQ(job["state"], "DONE") << job.dump();
  EXPECT_EQ(job["exit_code"], 0);
  // A later job runs and ends on the same host; the first never ran again meanwhile.
  const int64_t probe = Submit("true");
  EXPECT_TRUE(c().WaitAllEnded({probe}, 20s)) << c().Logs();
  EXPECT_EQ(Lines(done), 1u) << "the job ran twice\n" << c().Logs();
  EXPECT_EQ(c().Job(id)["state"], "DONE");
}

// The window the journal alone left open (6 of 2,000 jobs ran twice in the full soak): the
// job completes and exits while its agent cannot see it (SIGSTOPped here: in the soak, busy
// between two reaps), then the agent is SIGKILLed. Before the job shepherd the exit died with
// the agent (init reaped the zombie), the restarted agent reported the job gone and the
// controller ran it again; now the shepherd recorded the end before it exited, and the
// restarted agent reports it.
TEST_F(ExactlyOnceTest, AJobThatEndedJustBeforeItsAgentWasKilledIsReportedAndNotRunAgain) {
  c().StartAgent("h1", 2);
  ASSERT_TRUE(Eventually([&] { return c().HostState("h1") == "ok"; }, 20s)) << c().Logs();
  const fs::path done = c().dir() / "completions";
  const fs::path started = c().dir() / "started";
  const int64_t id =
      Submit("touch " + started.string() + "; sleep 1; echo ran >> " + done.string() + "; exit 3");
  // The job may run before its agent has reported the launch: stop the agent only once the
  // controller shows it RUNNING, within the job's second of sleep.
  ASSERT_TRUE(Eventually([&] { return fs::exists(started) && c().JobState(id) == "RUNNING"; }, 20s))
      << c().Logs();
  c().SignalAgent("h1", SIGSTOP);
  ASSERT_TRUE(Eventually([&] { return Lines(done) == 1; }, 10s)) << c().Logs();
  // The job has ended (its shell exits after its last line) while its agent could not see it.
  ASSERT_TRUE(Eventually([&] { return ProcessesMentioning(done.string()).empty(); }, 10s))
      << "the job's shell did not exit";
  c().StopAgent("h1", SIGKILL);
  EXPECT_EQ(c().JobState(id), "RUNNING") << "the exit was reported before the crash: a weak test";

  c().StartAgent("h1", 2);
  ASSERT_TRUE(c().WaitAllEnded({id}, 20s)) << c().Job(id).dump() << c().Logs();
  const json job = c().Job(id);
  EXPECT_EQ(job["state"], "EXIT") << job.dump();
  EXPECT_EQ(job["exit_code"], 3) << job.dump();
  const int64_t probe = Submit("true");
  EXPECT_TRUE(c().WaitAllEnded({probe}, 20s)) << c().Logs();
  EXPECT_EQ(Lines(done), 1u) << "the job ran twice\n" << c().Logs();
}

// Without cgroups the shepherd's kill at the end of the agent's lease (issue 43: a restart
// within it adopts the job instead) ends the job's leader but not a `setsid` child; the
// restarted agent finds it by its job marker and kills it before it registers.
TEST_F(ExactlyOnceTest, ARestartedAgentWithoutCgroupsKillsWhatItsCrashedRunLeft) {
  c().StartAgent("h1", 2, "", {"--cgroup", "none"});
  ASSERT_TRUE(Eventually([&] { return c().HostState("h1") == "ok"; }, 20s)) << c().Logs();
  const std::string tag = std::to_string(200000 + getpid());
  const std::vector<std::string> child = {"sleep", "8" + tag};
  const fs::path starts = c().dir() / "starts";
  const int64_t id = Submit("echo start >> " + starts.string() + "; setsid sleep 8" + tag +
                            " & exec sleep 9" + tag);
  ASSERT_TRUE(Eventually([&] { return !ProcessesRunning(child).empty(); }, 20s)) << c().Logs();
  ASSERT_TRUE(Eventually([&] { return c().JobState(id) == "RUNNING"; }, 10s));
  c().StopAgent("h1", SIGKILL);
  const std::vector<std::string> leader = {"sleep", "9" + tag};
  ASSERT_TRUE(Eventually([&] { return ProcessesRunning(leader).empty(); }, 30s))
      << "the shepherd did not kill the job at the lease's end\n"
      << c().Logs();
  const std::vector<pid_t> left = ProcessesRunning(child);
  const std::set<pid_t> stale(left.begin(), left.end());
  ASSERT_FALSE(stale.empty()) << "nothing left behind to sweep: a weak test";

  c().StartAgent("h1", 2, "", {"--cgroup", "none"});
  EXPECT_TRUE(Eventually(
      [&] {
        for (pid_t pid : ProcessesRunning(child)) {
          if (stale.contains(pid)) return false;
        }
        return true;
      },
      10s))
      << "the restarted agent left the crashed run's process running\n"
      << c().Logs();
  // The controller requeues the job its agent no longer runs, and it runs again, once.
  EXPECT_TRUE(Eventually([&] { return Lines(starts) == 2 && c().JobState(id) == "RUNNING"; }, 20s))
      << c().Job(id).dump() << c().Logs();
  EXPECT_LE(ProcessesRunning(child).size(), 1u);
  c().Cli({"cancel", std::to_string(id)});
  EXPECT_TRUE(c().WaitAllEnded({id}, 20s));
  // Without cgroups a cancel reaches the job's process group only: the test cleans up.
  for (pid_t pid : ProcessesRunning(child)) kill(pid, SIGKILL);
}

}  // namespace
}  // namespace sluice::integration
