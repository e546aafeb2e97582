// The Slurm and LSF drop-in commands driven by the real clients (R-COMPAT-3): Debian's
// snakemake and toil, unmodified, run the workflows of tests/integration/compat_workflows
// against a loopback cluster with build/compat/ first on PATH. Each test checks the client's
// exit code and what the workflow made; the failing workflows must make the client fail.
// Tests skip when a client is not installed (scripts/setup installs them).
// The toil runs use a fresh job store each (`js` is removed by toil at the end of a run).
// `snakemake --slurm` submits with sbatch and its jobs run their rule through `srun` (a step
// of the job, R-COMPAT-2). Open MPI through srun and blaunch is in launch_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

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

  // `argv` run in the work directory with the drop-ins first on PATH.
  std::vector<std::string> ClientArgv(const std::vector<std::string>& argv) {
    const fs::path compat = fs::path(testing::SluiceBinary()).parent_path() / "compat";
    std::vector<std::string> full = {"/usr/bin/env",
                                     "-C",
                                     work_.string(),
                                     "PATH=" + compat.string() + ":/usr/bin:/bin",
                                     "SLUICE_SERVER=" + cluster_->url(),
                                     "SLUICE_TOKEN=root-token",
                                     "USER=root",
                                     "HOME=" + work_.string(),
                                     "COMPAT_CALLER=from-the-caller"};
    full.insert(full.end(), argv.begin(), argv.end());
    return full;
  }

  testing::ProcessResult Client(const std::vector<std::string>& argv) {
    fs::create_directories(cluster_->dir() / "client");
    return testing::RunProcess(ClientArgv(argv), cluster_->dir() / "client",
                               std::chrono::seconds(240));
  }

  std::vector<std::string> Toil(const std::string& script, const std::string& batch_system) {
    return {"python3", script, "file:" + (work_ / "js").string(), "--batchSystem", batch_system,
            "--statePollingWait", "1", "--disableCaching"};
  }

  // The jobs the controller knows, as {"id", "state"} objects.
  json Jobs() { return cluster_->Get("/v1/jobs", "root-token"); }

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
  // Each rule's job saw its id as SLURM_JOB_ID (R-COMPAT-2).
  EXPECT_TRUE(std::regex_search(*c, std::regex("A job=[0-9]+"))) << *c;
  EXPECT_TRUE(std::regex_search(*c, std::regex("B job=[0-9]+"))) << *c;
}

TEST_F(CompatClientsTest, SnakemakeSlurmRunsTheWorkflowThroughSrunSteps) {
  if (!Installed("snakemake")) GTEST_SKIP() << "snakemake is not installed";
  testing::ProcessResult r =
      // The job also runs snakemake itself (python, ~150 MB): the rules' 100 MB would kill it.
      Client({"snakemake", "--slurm", "--default-resources", "slurm_partition=batch",
              "--set-resources", "a:mem_mb=1000", "b:mem_mb=1000", "-j", "2", "--latency-wait",
              "10", "--nolock"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::optional<std::string> c = ReadFile(work_ / "c.txt");
  ASSERT_TRUE(c.has_value()) << Describe(r);
  EXPECT_TRUE(std::regex_search(*c, std::regex("A job=[0-9]+"))) << *c;
  // Each rule ran as a step (`srun -n1 ...`) of its job.
  int with_steps = 0;
  for (const json& job : Jobs()) {
    json detail = cluster_->Get("/v1/jobs/" + std::to_string(job.value("id", 0)), "root-token");
    with_steps += detail.contains("steps") && !detail["steps"].empty() ? 1 : 0;
  }
  EXPECT_EQ(with_steps, 2) << Jobs().dump();
}

// The failing workflow through Snakemake's Slurm executor: it reads the job's end from sacct
// and names it FAILED (issue 40).
TEST_F(CompatClientsTest, SnakemakeSlurmFailsNamingTheFailedJob) {
  if (!Installed("snakemake")) GTEST_SKIP() << "snakemake is not installed";
  testing::ProcessResult r =
      Client({"snakemake", "--slurm", "-s", "Snakefile.fail", "--default-resources",
              "slurm_partition=batch", "--set-resources", "f:mem_mb=1000", "-j", "1",
              "--latency-wait", "5", "--nolock"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE((r.stdout_text + r.stderr_text).find("FAILED"), std::string::npos) << Describe(r);
  EXPECT_FALSE(fs::exists(work_ / "f.txt"));
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

TEST_F(CompatClientsTest, SnakemakeInterruptedCancelsItsJobWithScancel) {
  if (!Installed("snakemake")) GTEST_SKIP() << "snakemake is not installed";
  ChildProcess snakemake(
      ClientArgv({"snakemake", "-s", "Snakefile.long", "--cluster",
                  "sbatch --parsable -p batch -o cluster.%j.out", "--cluster-cancel", "scancel",
                  "-j", "1", "--nolock"}),
      cluster_->dir() / "snakemake.out", cluster_->dir() / "snakemake.err");
  ASSERT_TRUE(Eventually(
      [&] {
        const json jobs = Jobs();
        return jobs.is_array() && jobs.size() == 1 && jobs[0].value("state", "") == "RUNNING";
      },
      std::chrono::seconds(60)))
      << Jobs().dump();
  snakemake.Signal(SIGINT);
  EXPECT_TRUE(Eventually([&] { return Jobs()[0].value("state", "") == "CANCELLED"; },
                         std::chrono::seconds(60)))
      << Jobs().dump() << ReadFile(cluster_->dir() / "snakemake.err").value_or("");
  EXPECT_NE(snakemake.Wait(std::chrono::seconds(60)), 0);
}

// bmod, brequeue, bpeek and bsub -I as an LSF user types them (R-COMPAT-1, issue 40).
TEST_F(CompatClientsTest, LsfUsersModifyRequeuePeekAndRunInteractively) {
  testing::ProcessResult r = Client({"bsub", "-H", "-q", "batch", "-o", "peek.%J.out",
                                     "echo line-one; echo run >> runs.txt; sleep 60"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::smatch id_match = [&] {
    std::smatch m;
    std::regex_search(r.stdout_text, m, std::regex("Job <([0-9]+)>"));
    return m;
  }();
  ASSERT_EQ(id_match.size(), 2u) << r.stdout_text;
  const std::string id = id_match[1];
  const std::string path = "/v1/jobs/" + id;

  // bmod: the held job moves queue and is renamed; what Sluice cannot change, or an unknown
  // job, fails with LSF's 255.
  r = Client({"bmod", "-q", "normal", "-J", "renamed", id});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.stdout_text, "Parameters of job <" + id + "> are being changed\n");
  json job = cluster_->Get(path, "root-token");
  EXPECT_EQ(job.value("queue", ""), "normal") << job.dump();
  EXPECT_EQ(job.value("name", ""), "renamed") << job.dump();
  r = Client({"bmod", "-o", "elsewhere", id});
  EXPECT_EQ(r.exit_code, 255) << Describe(r);
  r = Client({"bmod", "-q", "batch", "99999"});
  EXPECT_EQ(r.exit_code, 255) << Describe(r);
  EXPECT_EQ(r.stderr_text, "Job <99999>: No matching job found\n");

  // bpeek on a job that does not run yet, then on the running job.
  r = Client({"bpeek", id});
  EXPECT_EQ(r.exit_code, 255) << Describe(r);
  ASSERT_EQ(cluster_->Cli({"release", id}, "root-token").exit_code, 0);
  ASSERT_TRUE(Eventually([&] {
    return ReadFile(work_ / ("peek." + id + ".out")).value_or("").find("line-one") !=
           std::string::npos;
  })) << cluster_->Logs();
  r = Client({"bpeek", id});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.stdout_text, "<< output from stdout >>\nline-one\n");
  r = Client({"bpeek"});  // the caller's newest running job
  EXPECT_EQ(r.stdout_text, "<< output from stdout >>\nline-one\n") << Describe(r);

  // brequeue: the running job goes back to wait and runs again; bkill ends it.
  r = Client({"brequeue", id});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.stdout_text, "Job <" + id + "> is being requeued\n");
  EXPECT_TRUE(Eventually([&] { return ReadFile(work_ / "runs.txt") == "run\nrun\n"; }))
      << ReadFile(work_ / "runs.txt").value_or("") << cluster_->Logs();
  EXPECT_EQ(Client({"bkill", id}).exit_code, 0);
  EXPECT_TRUE(Eventually(
      [&] { return cluster_->Get(path, "root-token").value("state", "") == "CANCELLED"; }));
  r = Client({"bkill", id, "99999"});
  EXPECT_EQ(r.exit_code, 255) << Describe(r);
  EXPECT_EQ(r.stderr_text,
            "Job <" + id + ">: Job has already finished\nJob <99999>: No matching job found\n");

  // bsub -I: LSF's lines, the command's output here, its exit code.
  r = Client({"bsub", "-I", "-q", "normal", "echo interactive-$((1 + 1)); exit 3"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_TRUE(std::regex_search(
      r.stdout_text,
      std::regex("^Job <[0-9]+> is submitted to queue <normal>\\.\n<<Waiting for dispatch "
                 "\\.\\.\\.>>\n<<Starting on n[12]>>\ninteractive-2\n$")))
      << Describe(r);
}

TEST_F(CompatClientsTest, ToilSlurmRunsTheJobWithItsExportedEnvironment) {
  if (!Installed("toil")) GTEST_SKIP() << "toil is not installed";
  testing::ProcessResult r = Client(Toil("hello_toil.py", "slurm"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.stdout_text.find("RESULT: hello world"), std::string::npos) << Describe(r);
  r = Client(Toil("env_toil.py", "slurm"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.stdout_text.find("OMP_NUM_THREADS=1 COMPAT_CALLER=from-the-caller"),
            std::string::npos)
      << Describe(r);
}

TEST_F(CompatClientsTest, ToilCwlRunnerOnSlurmAndLsf) {
  if (!Installed("toil-cwl-runner")) GTEST_SKIP() << "toil-cwl-runner is not installed";
  for (const char* batch_system : {"slurm", "lsf"}) {
    SCOPED_TRACE(batch_system);
    fs::remove_all(work_ / "js");
    fs::remove(work_ / "out.txt");
    testing::ProcessResult r =
        Client({"toil-cwl-runner", "--jobStore", "file:" + (work_ / "js").string(),
                "--batchSystem", batch_system, "--statePollingWait", "1", "--disableCaching",
                "--outdir", work_.string(), "hello.cwl", "--msg", "compat"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(ReadFile(work_ / "out.txt").value_or(""), "compat\n") << Describe(r);
  }
}

TEST_F(CompatClientsTest, ToilSlurmFailsWhenTheJobFails) {
  if (!Installed("toil")) GTEST_SKIP() << "toil is not installed";
  std::vector<std::string> argv = Toil("hello_toil.py", "slurm");
  argv.insert(argv.end(), {"--retryCount", "0", "--fail"});
  testing::ProcessResult r = Client(argv);
  EXPECT_NE(r.exit_code, 0) << Describe(r);
}

TEST_F(CompatClientsTest, ToilLsfRunsTheJobWithTheCallersEnvironment) {
  if (!Installed("toil")) GTEST_SKIP() << "toil is not installed";
  testing::ProcessResult r = Client(Toil("hello_toil.py", "lsf"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.stdout_text.find("RESULT: hello world"), std::string::npos) << Describe(r);
  r = Client(Toil("env_toil.py", "lsf"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.stdout_text.find("COMPAT_CALLER=from-the-caller"), std::string::npos)
      << Describe(r);
}

TEST_F(CompatClientsTest, ToilLsfFailsWhenTheJobFails) {
  if (!Installed("toil")) GTEST_SKIP() << "toil is not installed";
  std::vector<std::string> argv = Toil("hello_toil.py", "lsf");
  argv.insert(argv.end(), {"--retryCount", "0", "--fail"});
  testing::ProcessResult r = Client(argv);
  EXPECT_NE(r.exit_code, 0) << Describe(r);
}

}  // namespace
}  // namespace sluice::integration
