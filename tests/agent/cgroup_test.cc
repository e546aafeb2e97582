// Cgroups against a fake cgroup v2 tree in a temp dir (files created by the test, as the
// kernel would offer them): detection, the agent's directories and delegated controllers,
// limits, kill through cgroup.kill or freeze-signal-thaw, accounting, removal and the stale
// cleanup at start. The real-kernel paths are in job_runner_containment_test.cc.
#include "agent/cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

namespace fs = std::filesystem;
using sluice::testing::ReadFile;
using sluice::testing::TempDir;
using sluice::testing::WriteFile;

TEST(CgroupModeTest, StringTableIsComplete) {
  for (CgroupMode mode : {CgroupMode::kAuto, CgroupMode::kV2, CgroupMode::kV1, CgroupMode::kNone}) {
    Result<CgroupMode> parsed = ParseCgroupMode(ToString(mode));
    ASSERT_TRUE(parsed) << ToString(mode);
    EXPECT_EQ(*parsed, mode);
  }
  EXPECT_EQ(ToString(CgroupMode::kV1), "v1");
  EXPECT_EQ(ParseCgroupMode("v3").error().code(), StatusCode::kInvalidArgument);
}

// A fake unified tree: the root offers memory, cpu and pids.
class CgroupV2FakeTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(WriteFile(root() / "cgroup.controllers", "cpuset cpu io memory pids\n"));
    ASSERT_TRUE(WriteFile(root() / "cgroup.subtree_control", ""));
  }
  fs::path root() const { return dir_.path(); }
  CgroupOptions Options() const {
    return {.mode = CgroupMode::kV2, .fs_root = root().string(), .path = "sluice/h1"};
  }
  std::unique_ptr<Cgroups> Open() {
    Result<std::unique_ptr<Cgroups>> opened = OpenCgroups(Options());
    EXPECT_TRUE(opened) << opened.error().message();
    return opened ? std::move(*opened) : nullptr;
  }
  fs::path JobDir(int64_t job) const { return root() / "sluice/h1" / JobCgroupName(job); }

  TempDir dir_;
};

TEST_F(CgroupV2FakeTreeTest, ExplicitModesNeedTheirFiles) {
  TempDir empty;
  CgroupOptions options{.mode = CgroupMode::kV2, .fs_root = empty.path().string(), .path = "x"};
  EXPECT_EQ(DetectCgroupMode(options).error().code(), StatusCode::kFailedPrecondition);
  options.mode = CgroupMode::kV1;
  EXPECT_EQ(DetectCgroupMode(options).error().code(), StatusCode::kFailedPrecondition);
  // auto looks at the file system type: a temp dir is no cgroup file system.
  options.mode = CgroupMode::kAuto;
  EXPECT_EQ(DetectCgroupMode(options).value(), CgroupMode::kNone);
  options.mode = CgroupMode::kNone;
  EXPECT_EQ(DetectCgroupMode(options).value(), CgroupMode::kNone);
  EXPECT_EQ(DetectCgroupMode(Options()).value(), CgroupMode::kV2);
}

TEST_F(CgroupV2FakeTreeTest, OpenCreatesTheAgentTreeAndDelegatesControllers) {
  auto cgroups = Open();
  ASSERT_TRUE(cgroups);
  EXPECT_EQ(cgroups->mode(), CgroupMode::kV2);
  EXPECT_TRUE(fs::is_directory(root() / "sluice/h1"));
  // cpuset only for an agent that binds CPUs: without, jobs' cgroups are as they were.
  EXPECT_EQ(ReadFile(root() / "cgroup.subtree_control"), "+memory +cpu +pids");
  EXPECT_EQ(cgroups->AgentDirs(), std::vector<std::string>{(root() / "sluice/h1").string()});
  EXPECT_FALSE(cgroups->BindsCpus());
}

// cpuset delegated down to the agent's directory: a bound job's CPUs and nodes are written;
// an unbound job's files are left empty (a v2 cpuset inherits its parent's).
TEST_F(CgroupV2FakeTreeTest, ABoundJobGetsItsCpusetWhereCpusetIsDelegated) {
  fs::create_directories(root() / "sluice/h1");
  ASSERT_TRUE(WriteFile(root() / "sluice/cgroup.controllers", "cpuset cpu memory pids\n"));
  ASSERT_TRUE(WriteFile(root() / "sluice/h1/cgroup.controllers", "cpuset cpu memory pids\n"));
  // As the kernel shows it once enabled (a fake file would keep the "+" requests).
  ASSERT_TRUE(WriteFile(root() / "sluice/h1/cgroup.subtree_control", "cpuset cpu memory pids\n"));
  CgroupOptions options = Options();
  options.cpuset = true;
  Result<std::unique_ptr<Cgroups>> opened = OpenCgroups(options);
  ASSERT_TRUE(opened) << opened.error().message();
  std::unique_ptr<Cgroups> cgroups = std::move(*opened);
  EXPECT_EQ(ReadFile(root() / "cgroup.subtree_control"), "+memory +cpu +pids +cpuset");
  ASSERT_TRUE(cgroups);
  EXPECT_TRUE(cgroups->BindsCpus());
  ASSERT_TRUE(cgroups->Create(7, {.cpuset = {2, 3, 6, 7}, .mems = {1}}).ok());
  EXPECT_EQ(ReadFile(JobDir(7) / "cpuset.cpus"), "2-3,6-7");
  EXPECT_EQ(ReadFile(JobDir(7) / "cpuset.mems"), "1");
  ASSERT_TRUE(cgroups->Create(8, {}).ok());
  EXPECT_FALSE(fs::exists(JobDir(8) / "cpuset.cpus"));
}

TEST_F(CgroupV2FakeTreeTest, CreateWritesTheLimits) {
  auto cgroups = Open();
  ASSERT_TRUE(cgroups);
  ASSERT_TRUE(cgroups->Create(7, {.memory_mb = 64, .cpus = 2, .pids = 100}).ok());
  EXPECT_EQ(ReadFile(JobDir(7) / "memory.max"), "67108864");
  EXPECT_EQ(ReadFile(JobDir(7) / "cpu.max"), "200000 100000");
  EXPECT_EQ(ReadFile(JobDir(7) / "pids.max"), "100");
  EXPECT_EQ(cgroups->ProcsFiles(7),
            std::vector<std::string>{(JobDir(7) / "cgroup.procs").string()});
  // No limit asked: no limit file written.
  ASSERT_TRUE(cgroups->Create(8, {}).ok());
  EXPECT_FALSE(fs::exists(JobDir(8) / "memory.max"));
}

TEST_F(CgroupV2FakeTreeTest, UsageReadsCpuPeakLimitAndOomKills) {
  auto cgroups = Open();
  ASSERT_TRUE(cgroups);
  ASSERT_TRUE(cgroups->Create(3, {.memory_mb = 64}).ok());
  ASSERT_TRUE(WriteFile(JobDir(3) / "cpu.stat", "usage_usec 1500000\nuser_usec 1000000\n"));
  ASSERT_TRUE(WriteFile(JobDir(3) / "memory.peak", "104857600\n"));
  ASSERT_TRUE(WriteFile(JobDir(3) / "memory.events",
                        "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n"));
  CgroupUsage usage = cgroups->Usage(3);
  EXPECT_DOUBLE_EQ(usage.cpu_seconds.value_or(-1), 1.5);
  EXPECT_DOUBLE_EQ(usage.peak_mb.value_or(-1), 100.0);
  EXPECT_EQ(usage.memory_limit_mb, 64);
  EXPECT_EQ(usage.oom_kills, 1);
  // An unlimited cgroup ("max") and one the kernel gives no peak for.
  ASSERT_TRUE(cgroups->Create(4, {}).ok());
  ASSERT_TRUE(WriteFile(JobDir(4) / "memory.max", "max\n"));
  usage = cgroups->Usage(4);
  EXPECT_FALSE(usage.memory_limit_mb);
  EXPECT_FALSE(usage.peak_mb);
  EXPECT_EQ(usage.oom_kills, 0);
}

TEST_F(CgroupV2FakeTreeTest, KillWritesCgroupKill) {
  auto cgroups = Open();
  ASSERT_TRUE(cgroups);
  ASSERT_TRUE(cgroups->Create(5, {}).ok());
  ASSERT_TRUE(WriteFile(JobDir(5) / "cgroup.kill", ""));
  cgroups->Signal(5, SIGKILL);
  EXPECT_EQ(ReadFile(JobDir(5) / "cgroup.kill"), "1");
}

// Other signals (and SIGKILL before Linux 5.14): freeze, signal every listed pid, thaw.
TEST_F(CgroupV2FakeTreeTest, SignalFreezesSignalsEveryProcessAndThaws) {
  auto cgroups = Open();
  ASSERT_TRUE(cgroups);
  ASSERT_TRUE(cgroups->Create(6, {}).ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    execl("/bin/sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  ASSERT_TRUE(WriteFile(JobDir(6) / "cgroup.procs", std::to_string(child) + "\n"));
  ASSERT_TRUE(WriteFile(JobDir(6) / "cgroup.freeze", "0"));
  ASSERT_TRUE(WriteFile(JobDir(6) / "cgroup.events", "populated 1\nfrozen 1\n"));
  EXPECT_FALSE(cgroups->Empty(6));
  cgroups->Signal(6, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_EQ(ReadFile(JobDir(6) / "cgroup.freeze"), "0");  // thawed again
  ASSERT_TRUE(WriteFile(JobDir(6) / "cgroup.procs", ""));
  EXPECT_TRUE(cgroups->Empty(6));
}

TEST_F(CgroupV2FakeTreeTest, RemoveDeletesTheJobCgroupAndTheAgentTree) {
  auto cgroups = Open();
  ASSERT_TRUE(cgroups);
  ASSERT_TRUE(cgroups->Create(9, {.memory_mb = 1}).ok());
  ASSERT_TRUE(cgroups->Remove(9).ok());
  EXPECT_FALSE(fs::exists(JobDir(9)));
  EXPECT_TRUE(cgroups->Remove(9).ok());  // already gone
  cgroups->RemoveAgentDirs();
  EXPECT_FALSE(fs::exists(root() / "sluice"));
  EXPECT_TRUE(fs::exists(root() / "cgroup.controllers"));
}

TEST_F(CgroupV2FakeTreeTest, OpenRemovesStaleJobCgroupsOfACrashedAgent) {
  fs::create_directories(JobDir(42));
  fs::create_directories(root() / "sluice/h1/keep");
  ASSERT_TRUE(WriteFile(JobDir(42) / "cgroup.procs", ""));
  ASSERT_TRUE(WriteFile(root() / "sluice/h1/keep/cgroup.procs", ""));
  auto cgroups = Open();
  ASSERT_TRUE(cgroups);
  EXPECT_FALSE(fs::exists(JobDir(42)));
  EXPECT_TRUE(fs::exists(root() / "sluice/h1/keep"));  // not one of ours
}

TEST_F(CgroupV2FakeTreeTest, CreateReplacesALeftoverCgroupOfTheSameJob) {
  auto cgroups = Open();
  ASSERT_TRUE(cgroups);
  ASSERT_TRUE(cgroups->Create(11, {.memory_mb = 8}).ok());
  ASSERT_TRUE(cgroups->Create(11, {.pids = 5}).ok());
  EXPECT_FALSE(fs::exists(JobDir(11) / "memory.max"));
  EXPECT_EQ(ReadFile(JobDir(11) / "pids.max"), "5");
}

}  // namespace
}  // namespace sluice::agent
