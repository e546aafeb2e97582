// The Slurm and LSF drop-in commands driven by the real clients (R-COMPAT-3): Debian's
// snakemake and toil, unmodified, run the workflows of tests/integration/compat_workflows
// against a loopback cluster with build/compat/ first on PATH. Each test checks the client's
// exit code and what the workflow made; the failing workflows must make the client fail.
// Tests skip when a client is not installed (scripts/setup installs them).
// Not here: `snakemake --slurm` (its jobs run `srun`, which needs job steps, R-LAUNCH) and
// Open MPI (srun, blaunch).
#include <gtest/gtest.h>

#include <filesystem>

#include "integration/cluster_harness.h"
#include "testing/build_paths.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ReadFile;

// Jobs run as root (what the clients' files are owned by): the user `root` maps to the UNIX
// account root, which the cluster and the agents allow.
constexpr char kCluster[] = R"(
hosts:
  - name: n[1-2]
    slots: 4
    resources: {mem: 4000}
queues:
  - name: batch
    policy: fifo
  - name: normal
    policy: fifo
auth:
  agent_token: agent-token
  allow_root_jobs: true
  users:
    - {name: root, token: root-token, admin: true, unix_user: root}
)";

bool Installed(const std::string& program) {
  return fs::exists("/usr/bin/" + program);
}

class CompatClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "jobs run as the clients' user, root";
    cluster_ = std::make_unique<Cluster>(kCluster);
    std::string error;
    ASSERT_TRUE(cluster_->StartServer(&error)) << error;
    for (const char* name : {"n1", "n2"}) {
      cluster_->StartAgent(name, 4, "", {"--allow-root-jobs"});
    }
    ASSERT_TRUE(Eventually([&] {
      json hosts = cluster_->Get("/v1/hosts", "root-token");
      int ok = 0;
      for (const json& h : hosts.is_array() ? hosts : json::array()) {
        ok += h.value("state", "") == "ok" ? 1 : 0;
      }
      return ok == 2;
    })) << cluster_->Logs();
    work_ = cluster_->dir() / "work";
    fs::create_directories(work_);
    const fs::path workflows = fs::path(testing::SourceDir()) / "tests/integration/compat_workflows";
    for (const auto& entry : fs::directory_iterator(workflows)) {
      fs::copy_file(entry.path(), work_ / entry.path().filename());
    }
  }

  // Runs `argv` in the work directory with the drop-ins first on PATH.
  testing::ProcessResult Client(const std::vector<std::string>& argv) {
    const fs::path compat = fs::path(testing::SluiceBinary()).parent_path() / "compat";
    std::vector<std::string> full = {"/usr/bin/env",
                                     "-C",
                                     work_.string(),
                                     "PATH=" + compat.string() + ":/usr/bin:/bin",
                                     "SLUICE_SERVER=" + cluster_->url(),
                                     "SLUICE_TOKEN=root-token",
                                     "USER=root",
                                     "HOME=" + work_.string()};
    full.insert(full.end(), argv.begin(), argv.end());
    fs::create_directories(cluster_->dir() / "client");
    return testing::RunProcess(full, cluster_->dir() / "client", std::chrono::seconds(240));
  }

  std::string Describe(const testing::ProcessResult& r) {
    return r.error + "\nstdout:\n" + r.stdout_text + "\nstderr:\n" + r.stderr_text + "\n" + cluster_->Logs();
  }

  std::unique_ptr<Cluster> cluster_;
  fs::path work_;
};

TEST_F(CompatClientsTest, SnakemakeClusterSbatchRunsTheWorkflow) {
  if (!Installed("snakemake")) GTEST_SKIP() << "snakemake is not installed";
  testing::ProcessResult r =
      Client({"snakemake", "--cluster", "sbatch --parsable -p batch -o cluster.%j.out",
              "--cluster-cancel", "scancel", "-j", "2", "--latency-wait", "10", "--nolock"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::optional<std::string> c = ReadFile(work_ / "c.txt");
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(c->find("A job="), std::string::npos) << *c;
  EXPECT_NE(c->find("B job="), std::string::npos) << *c;
}

TEST_F(CompatClientsTest, SnakemakeClusterSbatchFailsWithTheFailingRule) {
  if (!Installed("snakemake")) GTEST_SKIP() << "snakemake is not installed";
  testing::ProcessResult r =
      Client({"snakemake", "-s", "Snakefile.fail", "--cluster",
              "sbatch --parsable -p batch -o cluster.%j.out", "--cluster-cancel", "scancel",
              "-j", "1", "--latency-wait", "5", "--nolock"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_FALSE(fs::exists(work_ / "f.txt"));
}

TEST_F(CompatClientsTest, SnakemakeClusterBsubRunsTheWorkflow) {
  if (!Installed("snakemake")) GTEST_SKIP() << "snakemake is not installed";
  testing::ProcessResult r =
      Client({"snakemake", "--cluster", "bsub -o cluster.%J.out", "--cluster-cancel", "bkill",
              "-j", "2", "--latency-wait", "10", "--nolock"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(fs::exists(work_ / "c.txt"));
}

TEST_F(CompatClientsTest, ToilSlurmRunsTheJobWithItsExportedEnvironment) {
  if (!Installed("toil")) GTEST_SKIP() << "toil is not installed";
  testing::ProcessResult r =
      Client({"python3", "hello_toil.py", "file:" + (work_ / "js").string(), "--batchSystem",
              "slurm", "--statePollingWait", "1", "--disableCaching"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.stdout_text.find("RESULT: hello world"), std::string::npos) << Describe(r);
  EXPECT_NE(r.stdout_text.find("SLURM_JOB_ID="), std::string::npos) << Describe(r);
}

TEST_F(CompatClientsTest, ToilSlurmFailsWhenTheJobFails) {
  if (!Installed("toil")) GTEST_SKIP() << "toil is not installed";
  testing::ProcessResult r =
      Client({"python3", "hello_toil.py", "file:" + (work_ / "js").string(), "--batchSystem",
              "slurm", "--statePollingWait", "1", "--disableCaching", "--retryCount", "0",
              "--fail"});
  EXPECT_NE(r.exit_code, 0) << Describe(r);
}

TEST_F(CompatClientsTest, ToilLsfRunsTheJob) {
  if (!Installed("toil")) GTEST_SKIP() << "toil is not installed";
  testing::ProcessResult r =
      Client({"python3", "hello_toil.py", "file:" + (work_ / "js").string(), "--batchSystem",
              "lsf", "--statePollingWait", "1", "--disableCaching"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.stdout_text.find("RESULT: hello world"), std::string::npos) << Describe(r);
}

}  // namespace
}  // namespace sluice::integration
