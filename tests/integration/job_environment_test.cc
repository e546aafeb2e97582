// Loopback integration of what a job inherits and where its output goes (issues 47.1, 47.4, 48),
// with a real server and a real agent (as root; jobs as nobody):
//  - a job's environment is its submitter's (MYVAR) plus the job's variables, and nothing of the
//    agent's: not a variable set only in the agent's environment, not the agent's token (given on
//    its command line), not the submitter's SLUICE_TOKEN or MUNGE_* (the deny list);
//  - the job's parent (the shepherd) shows an argv of its own: /proc/$PPID/cmdline, readable by
//    every user, holds no credential;
//  - a job without -o writes sluice-ID.out in its working directory, and `jobs -l` names it;
//  - a FIFO as output fails that job's launch at once, while the host keeps heartbeating and
//    stays ok, and another user's running job is untouched.
// Needs root (the agent switches jobs to nobody); skipped with a printed reason otherwise.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class JobEnvironmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the agent switches jobs to nobody";
    cluster_ = std::make_unique<Cluster>(DefaultClusterYaml(
        "hosts:\n  - {name: h1, slots: 4}\nqueues:\n  - {name: normal, policy: fifo}\n"));
    std::string error;
    ASSERT_TRUE(cluster_->StartServer(&error, {"--max-dispatch-attempts", "1"})) << error;
    // The agent's environment carries a variable of its own and a token-like secret.
    cluster_->StartAgent("h1", 4, "", {}, {"AGENT_ONLY_VAR=agent-side", "SLUICE_TOKEN=agent-token"});
    ASSERT_TRUE(Eventually([&] { return cluster_->HostState("h1") == "ok"; }, 20s))
        << cluster_->Logs();
  }

  Cluster& c() { return *cluster_; }

  int64_t Submit(std::vector<std::string> args, const std::string& token = "alice-token",
                 const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), {"submit", "--parsable"});
    testing::ProcessResult result = c().Cli(args, token, env);
    EXPECT_EQ(result.exit_code, 0) << result.stderr_text;
    return result.exit_code == 0 ? std::stoll(result.stdout_text) : -1;
  }

  std::unique_ptr<Cluster> cluster_;
};

TEST_F(JobEnvironmentTest, AJobSeesItsSubmittersEnvironmentAndNothingOfTheAgents) {
  const fs::path out = c().dir() / "env.out";
  const fs::path cmdline = c().dir() / "parent.cmdline";
  const int64_t id = Submit(
      {"-o", out.string(), "--",
       "env; tr '\\0' ' ' < /proc/$PPID/cmdline > " + cmdline.string()},
      "alice-token",
      {"MYVAR=from-the-submitter", "SLUICE_TOKEN=alice-token", "MUNGE_SECRET=m"});
  ASSERT_TRUE(c().WaitAllEnded({id}, 30s)) << c().Logs();
  ASSERT_EQ(c().JobState(id), "DONE") << c().Job(id).dump();
  const std::string env = testing::ReadFile(out).value_or("");
  EXPECT_NE(env.find("MYVAR=from-the-submitter\n"), std::string::npos) << env;
  EXPECT_NE(env.find("SLUICE_JOB_ID=" + std::to_string(id) + "\n"), std::string::npos) << env;
  EXPECT_NE(env.find("SLURM_JOB_ID=" + std::to_string(id) + "\n"), std::string::npos) << env;
  EXPECT_EQ(env.find("AGENT_ONLY_VAR"), std::string::npos) << env;
  EXPECT_EQ(env.find("SLUICE_TOKEN"), std::string::npos) << env;
  EXPECT_EQ(env.find("MUNGE_SECRET"), std::string::npos) << env;
  EXPECT_EQ(env.find("-token"), std::string::npos) << env;
  const std::string parent = testing::ReadFile(cmdline).value_or("");
  EXPECT_NE(parent.find("sluice-shepherd job " + std::to_string(id)), std::string::npos) << parent;
  EXPECT_EQ(parent.find("agent-token"), std::string::npos) << parent;
}

TEST_F(JobEnvironmentTest, ExportNoneSendsOnlyTheJobsOwnVariables) {
  const fs::path out = c().dir() / "none.out";
  const int64_t id = Submit({"--export", "NONE", "-o", out.string(), "--", "env"}, "alice-token",
                            {"MYVAR=from-the-submitter"});
  ASSERT_TRUE(c().WaitAllEnded({id}, 30s)) << c().Logs();
  const std::string env = testing::ReadFile(out).value_or("");
  EXPECT_EQ(env.find("MYVAR"), std::string::npos) << env;
  EXPECT_NE(env.find("SLUICE_JOB_ID="), std::string::npos) << env;
}

TEST_F(JobEnvironmentTest, OutputWithoutDashOGoesToSluiceIdOutInTheWorkingDirectory) {
  const int64_t id = Submit({"--cwd", c().dir().string(), "--", "echo hello"});
  ASSERT_TRUE(c().WaitAllEnded({id}, 30s)) << c().Logs();
  const fs::path file = c().dir() / ("sluice-" + std::to_string(id) + ".out");
  EXPECT_EQ(testing::ReadFile(file).value_or("<missing>"), "hello\n");
  // Created by the job's umask: the submitter's (the CLI sends its own, this test's).
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(static_cast<mode_t>(fs::status(file).permissions() & fs::perms::all), 0666 & ~mask);
  testing::ProcessResult long_form = c().Cli({"jobs", "-l", std::to_string(id)});
  EXPECT_NE(long_form.stdout_text.find(file.string()), std::string::npos) << long_form.stdout_text;
}

TEST_F(JobEnvironmentTest, AFifoAsOutputFailsOnlyThatJobAndTheHostStays) {
  const int64_t other = Submit({"--", "sleep 600"}, "bob-token");
  ASSERT_TRUE(Eventually([&] { return c().JobState(other) == "RUNNING"; }, 20s)) << c().Logs();
  const fs::path fifo = c().dir() / "trap";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  fs::permissions(fifo, fs::perms::all & ~(fs::perms::owner_exec | fs::perms::group_exec |
                                           fs::perms::others_exec));  // whatever the umask
  const int64_t id = Submit({"-o", fifo.string(), "--", "echo x"});
  ASSERT_TRUE(c().WaitAllEnded({id}, 30s)) << c().Logs();
  const nlohmann::json job = c().Job(id);
  // Without a reader the non-blocking open fails (ENXIO); with one its kind is refused.
  EXPECT_EQ(job.value("cause", ""), "DISPATCH_FAILED") << job.dump();
  EXPECT_NE(job.value("message", "").find(fifo.string()), std::string::npos) << job.dump();
  EXPECT_EQ(c().HostState("h1"), "ok");
  EXPECT_EQ(c().JobState(other), "RUNNING");
  // The agent still answers: a new job runs to completion on the same host.
  const int64_t after = Submit({"--", "true"});
  ASSERT_TRUE(c().WaitAllEnded({after}, 30s)) << c().Logs();
  EXPECT_EQ(c().JobState(after), "DONE");
  EXPECT_EQ(c().JobState(other), "RUNNING");
}

// The agent's token file must be readable by its owner only, as munged's key; the agent refuses
// one others can read rather than run with a credential every user may copy.
TEST(AgentTokenFileTest, AFileOthersCanReadIsRefused) {
  testing::TempDir dir;
  const fs::path file = dir.path() / "h1.token";
  testing::WriteFile(file, "secret\n");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  testing::ProcessResult result =
      testing::RunProcess({testing::SluiceBinary(), "agent", "--name", "h1", "--server",
                           "http://127.0.0.1:9", "--token-file", file.string()},
                          dir.path(), 30s);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.stderr_text.find("chmod 600"), std::string::npos) << result.stderr_text;
}

}  // namespace
}  // namespace sluice::integration
