// Loopback integration of libsluice-drmaa (issue 46, R-COMPAT-4): a real server and agent,
// driven through the library by Debian's python3-drmaa (tests/drmaa/scenarios.py, one scenario
// per test, printing what it saw as JSON), by a C program calling all 36 functions
// (tests/drmaa/all_functions.c), and by `snakemake --drmaa` on the shared two-rule workflow.
// The library finds the controller and credentials as the CLI does: SLUICE_SERVER and
// SLUICE_TOKEN in the environment of the process that loads it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing::ReadFile;

constexpr char kPython[] = "/usr/bin/python3";  // Debian's, where python3-drmaa is installed

constexpr char kCluster[] = R"(
hosts:
  - {name: h1, slots: 4}
queues:
  - {name: normal, policy: fifo}
)";

class DrmaaTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new Cluster(DefaultClusterYaml(kCluster));
    std::string error;
    ASSERT_TRUE(cluster_->StartServer(&error)) << error;
    cluster_->StartAgent("h1", 4);
    ASSERT_TRUE(Eventually([] { return cluster_->HostState("h1") == "ok"; })) << cluster_->Logs();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // `program ARGS` with the library and the controller in its environment.
  testing::ProcessResult RunWithDrmaa(std::vector<std::string> args,
                                      const std::string& token = "alice-token") {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "DRMAA_LIBRARY_PATH=" + std::string(testing::DrmaaLibrary()),
                                     "SLUICE_SERVER=" + cluster_->url(), "SLUICE_TOKEN=" + token};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunProcess(argv, cluster_->dir() / "cli", 180s);
  }

  // Runs scenario `name` of scenarios.py; its JSON (null, with the failure added, if none).
  json Scenario(const std::string& name, const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv = {
        kPython, std::string(testing::SourceDir()) + "/tests/drmaa/scenarios.py", name};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::ProcessResult run = RunWithDrmaa(argv);
    EXPECT_EQ(run.exit_code, 0) << run.error << run.stderr_text << cluster_->Logs();
    json result = json::parse(run.stdout_text, nullptr, false);
    EXPECT_FALSE(result.is_discarded()) << run.stdout_text << run.stderr_text;
    return result.is_discarded() ? json() : result;
  }

  // A directory jobs (running as nobody) can write in.
  std::filesystem::path WritableDir(const std::string& name) {
    const std::filesystem::path dir = cluster_->dir() / name;
    std::filesystem::create_directories(dir);
    std::filesystem::permissions(dir, std::filesystem::perms::all);
    return dir;
  }

  static Cluster* cluster_;
};

Cluster* DrmaaTest::cluster_ = nullptr;

TEST_F(DrmaaTest, AJobThatExitsThreeIsReportedExitedWithStatusThree) {
  const json info = Scenario("exit3");
  EXPECT_EQ(info["exited"], true);
  EXPECT_EQ(info["exit_status"], 3);
  EXPECT_EQ(info["signaled"], false);
  EXPECT_EQ(info["aborted"], false);
  // drmaa_wait's resource usage: the times, the host and the exit code.
  const std::set<std::string> keys = info["rusage"].get<std::set<std::string>>();
  for (const char* key : {"submission_time", "start_time", "end_time", "wallclock", "hosts",
                          "exit_code"}) {
    EXPECT_TRUE(keys.contains(key)) << key << " in " << info.dump();
  }
}

TEST_F(DrmaaTest, ABulkJobOfFiveWritesFiveFilesNamedByTheIndexPlaceholder) {
  const std::filesystem::path out = WritableDir("bulk");
  const json result = Scenario("bulk", {out.string()});
  ASSERT_EQ(result["ids"].size(), 5u) << result.dump();
  for (int i = 1; i <= 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ReadFile(out / ("out." + std::to_string(i))), "element " + std::to_string(i) + "\n");
  }
}

TEST_F(DrmaaTest, ATerminatedJobIsSignalledWhenItRanAndAbortedWhenItNeverDid) {
  const json result = Scenario("terminate");
  EXPECT_EQ(result["started"], true);
  EXPECT_EQ(result["held_state"], "user_on_hold");
  EXPECT_EQ(result["running"]["signaled"], true) << result.dump();
  EXPECT_EQ(result["running"]["exited"], false);
  EXPECT_FALSE(result["running"]["signal"].get<std::string>().empty());
  EXPECT_EQ(result["held"]["aborted"], true) << result.dump();
  EXPECT_EQ(result["held"]["exited"], false);
  EXPECT_EQ(result["failed_state"], "failed");
}

TEST_F(DrmaaTest, AnUnknownJobIdIsAnInvalidJob) {
  const json result = Scenario("unknown");
  EXPECT_EQ(result["job_ps"], "InvalidJobException");
  EXPECT_EQ(result["wait"], "InvalidJobException");
  EXPECT_EQ(result["control"], "InvalidJobException");
  EXPECT_EQ(result["malformed"], "InvalidJobException");
}

TEST_F(DrmaaTest, AHeldJobRunsOnceReleasedAndASecondReleaseIsInconsistent) {
  const json result = Scenario("hold_release");
  EXPECT_EQ(result["held"], "user_on_hold");
  EXPECT_EQ(result["second_release"], "ReleaseInconsistentStateException");
  EXPECT_EQ(result["info"]["exited"], true);
  EXPECT_EQ(result["info"]["exit_status"], 0);
  EXPECT_EQ(result["synchronize_reaped"], "InvalidJobException");
}

TEST_F(DrmaaTest, TheTemplatesEnvironmentReachesTheJobAndNothingElseOfTheSubmitter) {
  const std::filesystem::path out = WritableDir("env") / "out";
  const json info = Scenario("environment", {out.string()});
  EXPECT_EQ(info["exit_status"], 0);
  EXPECT_EQ(ReadFile(out), "v=hello world s=\n");
}

TEST_F(DrmaaTest, TheNativeSpecificationTakesSubmitFlagsAndRefusesBadOnes) {
  const json result = Scenario("native");
  const std::string id = result["job_id"].get<std::string>();
  const json job = cluster_->Job(std::stoll(id));
  EXPECT_EQ(job["tasks"], 2) << job.dump();
  EXPECT_EQ(job["name"], "drmaa-native");
  EXPECT_EQ(job["queue"], "normal");
  EXPECT_EQ(result["bad_tasks"][0], "InvalidAttributeValueException") << result.dump();
  EXPECT_NE(result["bad_tasks"][1].get<std::string>().find("-n x"), std::string::npos);
  EXPECT_EQ(result["array"][0], "InvalidAttributeValueException");
}

TEST_F(DrmaaTest, WaitAndSynchronizeGiveUpAtTheirTimeout) {
  const json result = Scenario("timeout");
  EXPECT_EQ(result["wait"], "ExitTimeoutException");
  EXPECT_EQ(result["wait_1s"], "ExitTimeoutException");
  EXPECT_EQ(result["synchronize"], "ExitTimeoutException");
  EXPECT_EQ(result["negative"], "InvalidArgumentException");
}

TEST_F(DrmaaTest, WaitingForAnyJobReapsEachOnceThenNamesNone) {
  const json result = Scenario("wait_any");
  EXPECT_EQ(result["reaped"], result["submitted"]);
  EXPECT_EQ(result["third"], "InvalidJobException");
}

TEST_F(DrmaaTest, ExitInOneThreadEndsAWaitInAnother) {
  const json result = Scenario("exit_wakes_waiter");
  EXPECT_EQ(result["waiter_ended"], true);
  EXPECT_EQ(result["waiter"], "NoActiveSessionException");
  EXPECT_EQ(result["after"]["signaled"], true) << result.dump();
}

TEST_F(DrmaaTest, ACProgramCallsEveryOneOfTheThirtySixFunctions) {
  testing::ProcessResult run = RunWithDrmaa({testing::DrmaaCProgram()});
  EXPECT_EQ(run.exit_code, 0) << run.error << run.stdout_text << run.stderr_text;
  std::set<std::string> called;
  std::istringstream lines(run.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("ok drmaa_")) called.insert(line.substr(3, line.find(' ', 3) - 3));
  }
  EXPECT_EQ(called.size(), 36u) << run.stdout_text;
}

TEST_F(DrmaaTest, AWrongTokenIsAnAuthFailureAtInit) {
  testing::ProcessResult run =
      RunWithDrmaa({kPython, "-c", "import drmaa; drmaa.Session().initialize()"}, "wrong-token");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.stderr_text.find("AuthorizationException"), std::string::npos)
      << run.stderr_text;
}

// Snakemake's jobscripts are executable by their owner only, so its jobs run as the user who
// wrote them: here root (`auth.allow_root_jobs`, agents with --allow-root-jobs).
constexpr char kRootCluster[] = R"(
hosts:
  - {name: h1, slots: 4}
queues:
  - {name: normal, policy: fifo}
auth:
  agent_token: agent-token
  allow_root_jobs: true
  users:
    - {name: root, token: root-token, unix_user: root}
    - {name: admin, token: admin-token, admin: true, unix_user: nobody}
)";

TEST(DrmaaSnakemakeTest, SnakemakeDrmaaRunsTheTwoRuleWorkflowAsSluiceJobs) {
  Cluster c(kRootCluster);
  std::string error;
  ASSERT_TRUE(c.StartServer(&error)) << error;
  c.StartAgent("h1", 4, "", {"--allow-root-jobs"});
  ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; })) << c.Logs();
  const std::filesystem::path workflow = c.dir() / "workflow";
  std::filesystem::create_directories(workflow);
  std::filesystem::copy_file(
      std::string(testing::SourceDir()) + "/tests/drmaa/workflow/Snakefile", workflow / "Snakefile");
  testing::ProcessResult run = testing::RunProcess(
      {"/usr/bin/env", "DRMAA_LIBRARY_PATH=" + std::string(testing::DrmaaLibrary()),
       "SLUICE_SERVER=" + c.url(), "SLUICE_TOKEN=root-token", "/usr/bin/snakemake", "--drmaa",
       " -n 1", "-j", "2", "--directory", workflow.string(), "--snakefile",
       (workflow / "Snakefile").string()},
      c.dir() / "cli", 240s);
  ASSERT_EQ(run.exit_code, 0) << run.error << run.stdout_text << run.stderr_text << c.Logs();
  // Each rule ran as a Sluice job: its SLUICE_JOB_ID is in the outputs.
  const std::string out = ReadFile(workflow / "c.txt").value_or("");
  EXPECT_TRUE(out.starts_with("A job=")) << out;
  EXPECT_EQ(out.find("job=\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nB job="), std::string::npos) << out;
  const std::string a_id = out.substr(6, out.find('\n') - 6);
  const json a_job = c.Get("/v1/jobs/" + a_id);
  EXPECT_EQ(a_job["state"], "DONE") << a_job.dump();
  EXPECT_EQ(a_job["tasks"], 1);
}

}  // namespace
}  // namespace sluice::integration
