// JobRunner with real processes for R-SEC-1/3/4: jobs run as their account (uid, groups,
// HOME..., files opened as the user), uid 0 and foreign accounts are refused, a job's cgroup
// holds all of it (a `setsid` child dies with it on kill and on run limit), the memory limit
// ends a job with kMemLimit, and CPU time and peak memory are reported. Tests that need root
// or a real cgroup tree skip with the reason; the fake-tree runner test runs everywhere.
// Waits are bounded polls; every process a test starts is stopped by PID.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "agent/job_runner.h"
#include "agent/runner_waits.h"
#include "testing/proc_scan.h"
#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using sluice::testing::Eventually;
using sluice::testing::ProcessesRunning;
using sluice::testing::ReadFile;
using sluice::testing::TempDir;
using sluice::testing::WriteFile;

constexpr uid_t kNobody = 65534;

// Waits until a process runs exactly `argv`.
bool WaitForProcess(const std::vector<std::string>& argv) {
  return Eventually([&] { return !ProcessesRunning(argv).empty(); });
}

// Kills (by pid) what a failed test left behind, so no sleep outlives the test.
struct KillLeftovers {
  std::vector<std::string> argv;
  ~KillLeftovers() {
    for (pid_t pid : ProcessesRunning(argv)) kill(pid, SIGKILL);
  }
};

// A directory the account `nobody` may enter: the temp dir is 0700 root.
fs::path NobodyDir(const TempDir& dir) {
  chmod(dir.path().c_str(), 0755);
  const fs::path home = dir.path() / "nobody";
  fs::create_directories(home);
  EXPECT_EQ(chown(home.c_str(), kNobody, kNobody), 0);
  return home;
}

#define SKIP_UNLESS_ROOT() \
  if (geteuid() != 0) GTEST_SKIP() << "needs root (switches uid, cgroups)"

// ---- Identity (R-SEC-1) ----

TEST(JobRunnerIdentityTest, RunsAsTheAccountWithItsEnvironmentAndOwnsItsOutput) {
  SKIP_UNLESS_ROOT();
  TempDir dir;
  const fs::path home = NobodyDir(dir);
  passwd* pw = getpwnam("nobody");
  ASSERT_NE(pw, nullptr);
  JobRunner runner;
  JobSpec spec{.job = 1,
               .command = "id -u; id -g; id -G; echo $HOME $USER $LOGNAME $SHELL; pwd",
               .cwd = home,
               .output = "out.%j",
               .env = {{"HOME", "/root"}, {"USER", "root"}},
               .account = "nobody"};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  auto exit = WaitExit(runner, 1);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0);
  const std::string gid = std::to_string(pw->pw_gid);
  EXPECT_EQ(ReadFile(home / "out.1"),
            "65534\n" + gid + "\n" + gid + "\n" + std::string(pw->pw_dir) + " nobody nobody " +
                pw->pw_shell + "\n" + fs::canonical(home).string() + "\n");
  struct stat st {};
  ASSERT_EQ(stat((home / "out.1").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);
}

TEST(JobRunnerIdentityTest, CannotWriteWhereItsAccountCannot) {
  SKIP_UNLESS_ROOT();
  TempDir dir;
  const fs::path home = NobodyDir(dir);
  const fs::path locked = dir.path() / "root-only";
  fs::create_directories(locked);
  chmod(locked.c_str(), 0755);
  JobRunner runner;
  JobSpec spec{.job = 2,
               .command = "echo secret > " + (locked / "f").string(),
               .cwd = home,
               .output = "out",
               .account = "nobody"};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  auto exit = WaitExit(runner, 2);
  ASSERT_TRUE(exit);
  EXPECT_NE(exit->exit_code.value_or(0), 0);  // a clear failure, not a silent success
  EXPECT_FALSE(fs::exists(locked / "f"));
  EXPECT_NE(ReadFile(home / "out").value_or("").find("Permission denied"), std::string::npos);
  // Its output file is opened as the account too: a failed launch naming the step.
  spec.job = 3;
  spec.output = (locked / "o").string();
  Status status = runner.Start(spec, Clock::now());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(status.message().starts_with("open output: ")) << status.message();
  EXPECT_FALSE(fs::exists(locked / "o"));
}

TEST(JobRunnerIdentityTest, RefusesUidZeroUnlessAllowed) {
  SKIP_UNLESS_ROOT();
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 4, .command = "id -u", .cwd = dir.path(), .output = "out", .account = "root"};
  EXPECT_EQ(runner.Start(spec, Clock::now()).code(), StatusCode::kPermissionDenied);
  EXPECT_FALSE(runner.IsRunning(4));
  JobRunner allowing(JobRunnerOptions{.allow_root = true});
  ASSERT_TRUE(allowing.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitExit(allowing, 4));
  EXPECT_EQ(ReadFile(dir.path() / "out"), "0\n");
}

TEST(JobRunnerIdentityTest, UnknownAccountIsAFailedLaunchNamingAccountAndHost) {
  JobRunner runner(JobRunnerOptions{.host = "h7"});
  Status status =
      runner.Start({.job = 5, .command = "true", .account = "sluice-no-such-user"}, Clock::now());
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("sluice-no-such-user"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("h7"), std::string::npos) << status.message();
}

// An agent that is not root runs its own account's jobs and refuses the others. Runs the
// runner in a child process that dropped to `nobody`; the verdict travels in the exit code.
TEST(JobRunnerIdentityTest, AgentNotRunningAsRootRunsOnlyItsOwnAccount) {
  SKIP_UNLESS_ROOT();
  TempDir dir;
  const fs::path home = NobodyDir(dir);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) _exit(10);
    JobRunner runner(JobRunnerOptions{.host = "h8"});
    Status other = runner.Start({.job = 1, .command = "true", .account = "daemon"}, Clock::now());
    if (other.code() != StatusCode::kPermissionDenied) _exit(11);
    if (other.message().find("h8") == std::string::npos) _exit(12);
    JobSpec own{.job = 2, .command = "id -u", .cwd = home, .output = "own", .account = "nobody"};
    if (!runner.Start(own, Clock::now()).ok()) _exit(13);
    if (!WaitExit(runner, 2)) _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFile(home / "own"), "65534\n");
}

// ---- Containment and accounting on this kernel's cgroups (R-SEC-3, R-SEC-4) ----

class JobRunnerCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_UNLESS_ROOT();
    Result<CgroupMode> detected = DetectCgroupMode({.mode = CgroupMode::kAuto});
    if (!detected || *detected == CgroupMode::kNone) {
      GTEST_SKIP() << "no cgroup v1 or v2 tree at /sys/fs/cgroup";
    }
    runner_ = std::make_unique<JobRunner>(JobRunnerOptions{
        .host = "test",
        .cgroup = {.mode = CgroupMode::kAuto, .path = "sluice-test-" + std::to_string(getpid())},
        .pids_limit = 512});
    Status setup = runner_->Setup();
    ASSERT_TRUE(setup.ok()) << setup.message();
    ASSERT_NE(runner_->containment(), CgroupMode::kNone) << runner_->warning();
  }
  void TearDown() override { runner_.reset(); }

  std::unique_ptr<JobRunner> runner_;
  TempDir dir_;
};

TEST_F(JobRunnerCgroupTest, KillLeavesNoProcessOfTheJob) {
  const std::vector<std::string> sleeper = {"sleep", "300." + std::to_string(getpid()) + "1"};
  KillLeftovers cleanup{sleeper};
  JobSpec spec{.job = 21,
               .command = "setsid " + sleeper[0] + " " + sleeper[1] + " & wait",
               .cwd = dir_.path()};
  ASSERT_TRUE(runner_->Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForProcess(sleeper));
  ASSERT_TRUE(runner_->Kill(21, 200ms, Clock::now()));
  auto exit = WaitExit(*runner_, 21);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->cause, ExitCause::kKilled);
  EXPECT_EQ(ProcessesRunning(sleeper), std::vector<pid_t>{});
}

TEST_F(JobRunnerCgroupTest, RunLimitLeavesNoProcessOfTheJob) {
  const std::vector<std::string> sleeper = {"sleep", "300." + std::to_string(getpid()) + "2"};
  KillLeftovers cleanup{sleeper};
  JobSpec spec{.job = 22,
               .command = "setsid " + sleeper[0] + " " + sleeper[1] + " & wait",
               .cwd = dir_.path(),
               .run_limit = 500ms};
  ASSERT_TRUE(runner_->Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForProcess(sleeper));
  auto exit = WaitExit(*runner_, 22);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->cause, ExitCause::kRunLimit);
  EXPECT_EQ(ProcessesRunning(sleeper), std::vector<pid_t>{});
}

TEST_F(JobRunnerCgroupTest, LeftoversOfAJobThatEndedAreKilledBeforeItsExitIsReported) {
  const std::vector<std::string> sleeper = {"sleep", "300." + std::to_string(getpid()) + "3"};
  KillLeftovers cleanup{sleeper};
  JobSpec spec{.job = 23,
               .command = "setsid " + sleeper[0] + " " + sleeper[1] + " & " +
                          "while ! grep -q 300 /proc/$!/cmdline 2>/dev/null; do :; done",
               .cwd = dir_.path()};
  ASSERT_TRUE(runner_->Start(spec, Clock::now()).ok());
  auto exit = WaitExit(*runner_, 23);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(ProcessesRunning(sleeper), std::vector<pid_t>{});
}

TEST_F(JobRunnerCgroupTest, MemoryLimitEndsTheJobWithMemLimit) {
  JobSpec spec{.job = 24,
               .command = "head -c 512M /dev/zero | tail",
               .cwd = dir_.path(),
               .mem_limit_mb = 64};
  ASSERT_TRUE(runner_->Start(spec, Clock::now()).ok());
  auto exit = WaitExit(*runner_, 24);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->cause, ExitCause::kMemLimit);
  EXPECT_NE(exit->message.find("memory limit 64 MB"), std::string::npos) << exit->message;
  EXPECT_NE(exit->message.find("peak "), std::string::npos) << exit->message;
  EXPECT_LE(exit->max_rss_mb, 65);
}

TEST_F(JobRunnerCgroupTest, AJobWithinItsLimitEndsNormallyWithAPlausiblePeak) {
  JobSpec spec{.job = 25,
               .command = "head -c 24M /dev/zero | tail > /dev/null",
               .cwd = dir_.path(),
               .mem_limit_mb = 64};
  ASSERT_TRUE(runner_->Start(spec, Clock::now()).ok());
  auto exit = WaitExit(*runner_, 25);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->cause, ExitCause::kExit);
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_TRUE(exit->message.empty());
  EXPECT_GE(exit->max_rss_mb, 20);  // tail held the 24 MB
  EXPECT_LE(exit->max_rss_mb, 64);
}

TEST_F(JobRunnerCgroupTest, ReportsTheCpuTimeOfABusyLoop) {
  // Busy until it has used 1 s of CPU (not wall time: the machine may be loaded).
  JobSpec spec{.job = 26,
               .argv = {"python3", "-c", "import time\nwhile time.process_time() < 1: pass"},
               .cwd = dir_.path()};
  ASSERT_TRUE(runner_->Start(spec, Clock::now()).ok());
  auto exit = WaitExit(*runner_, 26);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_GE(exit->cpu_seconds, 0.5);
  EXPECT_LT(exit->cpu_seconds, 30);
  EXPECT_GT(exit->max_rss_mb, 1);
}

TEST_F(JobRunnerCgroupTest, AJobAsNobodyIsContainedToo) {
  const fs::path home = NobodyDir(dir_);
  const std::vector<std::string> sleeper = {"sleep", "300." + std::to_string(getpid()) + "4"};
  KillLeftovers cleanup{sleeper};
  JobSpec spec{.job = 27,
               .command = "setsid " + sleeper[0] + " " + sleeper[1] + " & wait",
               .cwd = home,
               .account = "nobody"};
  ASSERT_TRUE(runner_->Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForProcess(sleeper));
  ASSERT_TRUE(runner_->Kill(27, 0ms, Clock::now()));
  ASSERT_TRUE(WaitExit(*runner_, 27));
  EXPECT_EQ(ProcessesRunning(sleeper), std::vector<pid_t>{});
}

// A crashed agent's job cgroup (with a process still in it) is cleaned up by the next
// runner's Setup; a runner removes its cgroups when destroyed.
TEST_F(JobRunnerCgroupTest, SetupRemovesStaleCgroupsAndTheRunnerItsOwn) {
  const CgroupOptions options{.mode = CgroupMode::kAuto,
                              .path = "sluice-test-" + std::to_string(getpid()) + "-stale"};
  std::vector<std::string> agent_dirs;
  const pid_t stale = fork();
  ASSERT_GE(stale, 0);
  if (stale == 0) {
    execl("/bin/sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  {
    Result<std::unique_ptr<Cgroups>> crashed = OpenCgroups(options);
    ASSERT_TRUE(crashed) << crashed.error().message();
    ASSERT_TRUE((*crashed)->Create(31, {}).ok());
    for (const std::string& procs : (*crashed)->ProcsFiles(31)) {
      ASSERT_TRUE(WriteFile(procs, std::to_string(stale)));
    }
    agent_dirs = (*crashed)->AgentDirs();
  }  // dropped without cleanup, as by a crash
  {
    JobRunner next(JobRunnerOptions{.cgroup = options});
    ASSERT_TRUE(next.Setup().ok());
    int status = 0;
    ASSERT_EQ(waitpid(stale, &status, 0), stale);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    for (const std::string& dir : agent_dirs) {
      EXPECT_FALSE(fs::exists(fs::path(dir) / JobCgroupName(31))) << dir;
    }
    ASSERT_TRUE(
        next.Start({.job = 32, .command = "exit 0", .cwd = dir_.path()}, Clock::now()).ok());
    ASSERT_TRUE(WaitExit(next, 32));
  }
  for (const std::string& dir : agent_dirs) EXPECT_FALSE(fs::exists(dir)) << dir;
}

// The limits as this kernel's interface files hold them.
TEST(CgroupKernelTest, CreateSetsTheLimitsAndRemoveCleansUp) {
  SKIP_UNLESS_ROOT();
  const CgroupOptions options{.mode = CgroupMode::kAuto,
                              .path = "sluice-test-" + std::to_string(getpid()) + "-limits"};
  Result<CgroupMode> mode = DetectCgroupMode(options);
  if (!mode || *mode == CgroupMode::kNone) {
    GTEST_SKIP() << "no cgroup v1 or v2 tree at /sys/fs/cgroup";
  }
  Result<std::unique_ptr<Cgroups>> opened = OpenCgroups(options);
  ASSERT_TRUE(opened) << opened.error().message();
  Cgroups& cgroups = **opened;
  ASSERT_TRUE(cgroups.Create(1, {.memory_mb = 64, .cpus = 2, .pids = 50}).ok());
  EXPECT_EQ(cgroups.Usage(1).memory_limit_mb, 64);
  const fs::path root = "/sys/fs/cgroup";
  const std::string job = JobCgroupName(1);
  if (*mode == CgroupMode::kV2) {
    EXPECT_EQ(ReadFile(root / options.path / job / "memory.max"), "67108864\n");
    EXPECT_EQ(ReadFile(root / options.path / job / "cpu.max"), "200000 100000\n");
    EXPECT_EQ(ReadFile(root / options.path / job / "pids.max"), "50\n");
  } else {
    EXPECT_EQ(ReadFile(root / "memory" / options.path / job / "memory.limit_in_bytes"),
              "67108864\n");
    if (fs::exists(root / "cpu/cgroup.procs")) {
      EXPECT_EQ(ReadFile(root / "cpu" / options.path / job / "cpu.cfs_quota_us"), "200000\n");
    }
    if (fs::exists(root / "pids/cgroup.procs")) {
      EXPECT_EQ(ReadFile(root / "pids" / options.path / job / "pids.max"), "50\n");
    }
  }
  EXPECT_TRUE(cgroups.Empty(1));
  ASSERT_TRUE(cgroups.Remove(1).ok());
  const std::vector<std::string> dirs = cgroups.AgentDirs();
  for (const std::string& dir : dirs) EXPECT_FALSE(fs::exists(fs::path(dir) / job)) << dir;
  cgroups.RemoveAgentDirs();
  for (const std::string& dir : dirs) EXPECT_FALSE(fs::exists(dir)) << dir;
}

TEST(JobRunnerCgroupV2KernelTest, RunsWhereTheKernelHasTheUnifiedTree) {
  SKIP_UNLESS_ROOT();
  CgroupOptions options{.mode = CgroupMode::kV2, .path = "sluice-test-v2"};
  Result<CgroupMode> detected = DetectCgroupMode({.mode = CgroupMode::kAuto});
  if (!DetectCgroupMode(options) || !detected || *detected != CgroupMode::kV2) {
    GTEST_SKIP() << "/sys/fs/cgroup is not a cgroup v2 (unified) mount on this kernel; the v2 "
                    "path is covered by CgroupV2FakeTreeTest and by JobRunnerCgroupTest on "
                    "v2 hosts";
  }
  JobRunner runner(JobRunnerOptions{.cgroup = options});
  ASSERT_TRUE(runner.Setup().ok());
  EXPECT_EQ(runner.containment(), CgroupMode::kV2);
}

// ---- The runner's cgroup v2 path against a fake tree (no root needed) ----

TEST(JobRunnerFakeCgroupTest, AnOomKillInTheCgroupEndsTheJobWithMemLimit) {
  TempDir root;
  ASSERT_TRUE(WriteFile(root.path() / "cgroup.controllers", "memory cpu pids\n"));
  JobRunner runner(JobRunnerOptions{
      .host = "h1", .cgroup = {.mode = CgroupMode::kV2, .fs_root = root.path(), .path = "a/h1"}});
  ASSERT_TRUE(runner.Setup().ok());
  ASSERT_EQ(runner.containment(), CgroupMode::kV2);
  const fs::path job_dir = root.path() / "a/h1/job_5";
  // The job plays the kernel: it reports an OOM kill and a peak in its own fake cgroup.
  JobSpec spec{.job = 5,
               .command =
                   "printf 'oom 1\\noom_kill 1\\n' > memory.events; "
                   "echo 70000000 > memory.peak; echo 'usage_usec 250000' > cpu.stat; "
                   "exit 137",
               .cwd = job_dir,
               .mem_limit_mb = 64};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  EXPECT_EQ(ReadFile(job_dir / "memory.max"), "67108864");
  EXPECT_EQ(ReadFile(job_dir / "cgroup.procs"), "0");  // the child joined it before exec
  auto exit = WaitExit(runner, 5);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->cause, ExitCause::kMemLimit);
  EXPECT_EQ(exit->exit_code, 137);
  EXPECT_EQ(exit->message,
            "memory limit 64 MB reached (peak 67 MB, 1 process killed by the OOM killer)");
  EXPECT_DOUBLE_EQ(exit->cpu_seconds, 0.25);
  EXPECT_NEAR(exit->max_rss_mb, 66.76, 0.01);
  EXPECT_FALSE(fs::exists(job_dir));  // removed after the exit
}

TEST(JobRunnerFakeCgroupTest, AnExplicitLayoutThatIsMissingIsAnError) {
  TempDir root;
  JobRunner runner(
      JobRunnerOptions{.cgroup = {.mode = CgroupMode::kV2, .fs_root = root.path(), .path = "a"}});
  EXPECT_EQ(runner.Setup().code(), StatusCode::kFailedPrecondition);
  JobRunner fallback(
      JobRunnerOptions{.cgroup = {.mode = CgroupMode::kAuto, .fs_root = root.path(), .path = "a"}});
  EXPECT_TRUE(fallback.Setup().ok());
  EXPECT_EQ(fallback.containment(), CgroupMode::kNone);
  EXPECT_FALSE(fallback.warning().empty());
}

}  // namespace
}  // namespace sluice::agent

namespace sluice::agent {
namespace {

// Issue 47.3: after the agent's cgroup tree vanished, every launch failed and the host stayed
// "ok". A launch that fails because the host's containment is gone is the host's fault, so the
// controller can close the host instead of failing one job after another.
TEST(JobRunnerFakeCgroupTest, ALaunchIntoAVanishedCgroupTreeIsTheHostsFault) {
  TempDir root;
  ASSERT_TRUE(WriteFile(root.path() / "cgroup.controllers", "memory cpu pids\n"));
  JobRunner runner(JobRunnerOptions{
      .host = "h1", .cgroup = {.mode = CgroupMode::kV2, .fs_root = root.path(), .path = "a/h1"}});
  ASSERT_TRUE(runner.Setup().ok());
  fs::remove_all(root.path() / "a");
  const Status status = runner.Start({.job = 6, .command = "true"}, Clock::now());
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(IsHostFault(status)) << status.ToString();
  EXPECT_FALSE(runner.IsRunning(6));
}

}  // namespace
}  // namespace sluice::agent
