// JobRunner with real short processes: exit codes, output files and `%j`, the job
// environment and cwd, run limits, kill with SIGTERM then SIGKILL, failed launches, and the
// cleanup of a finished job's leftover processes. Waits are bounded polls, never sleeps that
// a test's verdict depends on.
#include "agent/job_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "agent/runner_waits.h"
#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using sluice::testing::Eventually;
using sluice::testing::ReadFile;
using sluice::testing::TempDir;

bool WaitForFile(const fs::path& path) {
  return Eventually([&] { return fs::exists(path); });
}

// True when pid no longer runs (gone, or a zombie waiting for its reaper).
bool ProcessEnded(pid_t pid) {
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  const size_t paren = stat->rfind(')');
  return paren != std::string::npos && paren + 2 < stat->size() && (*stat)[paren + 2] == 'Z';
}

TEST(ExpandJobPatternTest, ReplacesEveryJobMarker) {
  EXPECT_EQ(ExpandJobPattern("out.%j.%j.txt", 42), "out.42.42.txt");
  EXPECT_EQ(ExpandJobPattern("plain", 1), "plain");
  EXPECT_EQ(ExpandJobPattern("100%%-%j%", 7), "100%%-7%");
}

TEST(ExitCauseTest, StringTableIsComplete) {
  EXPECT_EQ(ToString(ExitCause::kExit), "exit");
  EXPECT_EQ(ToString(ExitCause::kRunLimit), "run_limit");
  EXPECT_EQ(ToString(ExitCause::kKilled), "killed");
  EXPECT_EQ(ToString(ExitCause::kMemLimit), "mem_limit");
}

TEST(JobRunnerTest, ReportsExitCodes) {
  TempDir dir;
  JobRunner runner;
  ASSERT_TRUE(runner.Start({.job = 1, .command = "exit 0", .cwd = dir.path()}, Clock::now()).ok());
  ASSERT_TRUE(
      runner.Start({.job = 2, .run = 77, .command = "exit 3", .cwd = dir.path()}, Clock::now())
          .ok());
  // Both may end in the same Poll: collect until both have been seen.
  std::map<int64_t, JobExit> exits;
  const auto deadline = Clock::now() + 20s;
  while (exits.size() < 2 && Clock::now() < deadline) {
    for (const JobExit& exit : runner.Poll(Clock::now(), 200ms)) exits[exit.job] = exit;
    std::this_thread::sleep_for(5ms);
  }
  std::optional<JobExit> first;
  std::optional<JobExit> second;
  if (exits.contains(1)) first = exits[1];
  if (exits.contains(2)) second = exits[2];
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->exit_code, 0);
  EXPECT_EQ(first->cause, ExitCause::kExit);
  EXPECT_EQ(second->exit_code, 3);
  EXPECT_FALSE(second->signal.has_value());
  EXPECT_EQ(first->run, 0u);
  EXPECT_EQ(second->run, 77u);  // the launch's run, for its exit report
  EXPECT_EQ(runner.size(), 0u);
}

TEST(JobRunnerTest, WritesOutputAndErrorFilesWithJobId) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 17,
               .command = "echo out; echo err >&2",
               .cwd = dir.path(),
               .output = "o.%j",
               .error = (dir.path() / "e.%j").string()};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitExit(runner, 17));
  EXPECT_EQ(ReadFile(dir.path() / "o.17"), "out\n");
  EXPECT_EQ(ReadFile(dir.path() / "e.17"), "err\n");
}

TEST(JobRunnerTest, ErrorDefaultsToTheOutputFile) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 5, .command = "echo a; echo b >&2", .cwd = dir.path(), .output = "both.%j"};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitExit(runner, 5));
  EXPECT_EQ(ReadFile(dir.path() / "both.5"), "a\nb\n");
}

TEST(JobRunnerTest, RunsWithJobEnvironmentInItsWorkingDirectory) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{
      .job = 9,
      .command = "echo $SLUICE_JOB_ID $SLUICE_NTASKS $SLUICE_HOSTS; pwd",
      .cwd = dir.path(),
      .output = "env.out",
      .env = {{"SLUICE_JOB_ID", "9"}, {"SLUICE_NTASKS", "4"}, {"SLUICE_HOSTS", "h1:2,h2:2"}}};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitExit(runner, 9));
  EXPECT_EQ(ReadFile(dir.path() / "env.out"),
            "9 4 h1:2,h2:2\n" + fs::canonical(dir.path()).string() + "\n");
}

TEST(JobRunnerTest, RunsAnArgvWithoutAShell) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 3, .argv = {"echo", "a b", "$HOME"}, .cwd = dir.path(), .output = "argv"};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitExit(runner, 3));
  EXPECT_EQ(ReadFile(dir.path() / "argv"), "a b $HOME\n");
}

TEST(JobRunnerTest, FailedLaunchesAreReportedWithTheStep) {
  TempDir dir;
  JobRunner runner;
  struct Case {
    std::string_view name;
    JobSpec spec;
    std::string_view message_start;
  };
  const std::vector<Case> cases = {
      {"missing cwd", {.job = 1, .command = "true", .cwd = dir.path() / "nope"}, "chdir: "},
      {"output dir missing",
       {.job = 2, .command = "true", .cwd = dir.path(), .output = "no/such/dir/o"},
       "open output: "},
      {"no such program", {.job = 3, .argv = {"sluice-no-such-program"}}, "exec: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Status status = runner.Start(c.spec, Clock::now());
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
    EXPECT_TRUE(status.message().starts_with(c.message_start)) << status.message();
    EXPECT_FALSE(IsHostFault(status));  // the job's own: it must not close the host
    EXPECT_FALSE(runner.IsRunning(c.spec.job));
  }
}

TEST(JobRunnerTest, RefusesToStartARunningJobTwice) {
  JobRunner runner;
  ASSERT_TRUE(runner.Start({.job = 4, .command = "sleep 30"}, Clock::now()).ok());
  EXPECT_EQ(runner.Start({.job = 4, .command = "true"}, Clock::now()).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(runner.Running(), std::vector<int64_t>{4});
  runner.Kill(4, 0ms, Clock::now());
  auto exit = WaitExit(runner, 4);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->cause, ExitCause::kKilled);
}

TEST(JobRunnerTest, RunLimitTerminatesTheJob) {
  JobRunner runner;
  ASSERT_TRUE(
      runner.Start({.job = 6, .command = "exec sleep 30", .run_limit = 100ms}, Clock::now()).ok());
  auto exit = WaitExit(runner, 6);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->cause, ExitCause::kRunLimit);
  EXPECT_EQ(exit->signal, SIGTERM);
}

TEST(JobRunnerTest, KillEscalatesToSigkillWhenTermIsTrapped) {
  TempDir dir;
  JobRunner runner;
  const fs::path ready = dir.path() / "ready";
  JobSpec spec{.job = 8, .command = "trap '' TERM; touch ready; sleep 30", .cwd = dir.path()};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForFile(ready));
  ASSERT_TRUE(runner.Kill(8, 200ms, Clock::now()));
  auto exit = WaitExit(runner, 8);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->cause, ExitCause::kKilled);
  EXPECT_EQ(exit->signal, SIGKILL);
}

TEST(JobRunnerTest, ARepeatedKillSendsNoSecondTerm) {
  TempDir dir;
  JobRunner runner;
  const fs::path ready = dir.path() / "ready";
  // Counts the TERMs it receives (issue 19: one TERM, then one KILL, no kill loop).
  JobSpec spec{.job = 9,
               .command =
                   "trap 'echo term >> terms' TERM; touch ready; "
                   "while true; do sleep 0.05; done",
               .cwd = dir.path()};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForFile(ready));
  EXPECT_TRUE(runner.Kill(9, 600ms, Clock::now()));
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(runner.Kill(9, 600ms, Clock::now()));
  auto exit = WaitExit(runner, 9);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGKILL);
  const std::optional<std::string> terms = sluice::testing::ReadFile(dir.path() / "terms");
  ASSERT_TRUE(terms);
  EXPECT_EQ(*terms, "term\n");
}

TEST(JobRunnerTest, KillWithGraceLetsTermEndTheJob) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 10,
               .command = "trap 'exit 7' TERM; touch ready; while :; do sleep 0.05; done",
               .cwd = dir.path()};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForFile(dir.path() / "ready"));
  runner.KillAll(20s, Clock::now());
  auto exit = WaitExit(runner, 10);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_EQ(exit->cause, ExitCause::kKilled);
}

// Issue 47 (`sluice cancel --signal`): a user's signal reaches the job once, and the job goes
// on; one that ends it is the job's own exit, not a kill.
TEST(JobRunnerTest, ASignalReachesTheJobWhichGoesOn) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 11,
               .command = "trap 'echo usr1 >> got' USR1; touch ready; "
                          "while [ ! -e go ]; do sleep 0.05; done; exit 3",
               .cwd = dir.path()};
  spec.run = 5;
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForFile(dir.path() / "ready"));
  EXPECT_FALSE(runner.Signal(11, 4, SIGUSR1)) << "an order for another run of the job";
  EXPECT_TRUE(runner.Signal(11, 5, SIGUSR1));
  ASSERT_TRUE(WaitForFile(dir.path() / "got"));
  EXPECT_TRUE(runner.IsRunning(11));
  EXPECT_TRUE(runner.Poll(Clock::now(), 1s).empty());
  { std::ofstream(dir.path() / "go").put('\n'); }
  auto exit = WaitExit(runner, 11);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 3);
  EXPECT_EQ(exit->cause, ExitCause::kExit);
  EXPECT_EQ(ReadFile(dir.path() / "got"), "usr1\n");
  EXPECT_FALSE(runner.Signal(11, 0, SIGUSR1)) << "it no longer runs";
}

TEST(JobRunnerTest, ASignalThatEndsTheJobIsItsExitNotAKill) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 12, .command = "touch ready; exec sleep 30", .cwd = dir.path()};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForFile(dir.path() / "ready"));
  EXPECT_TRUE(runner.Signal(12, 0, SIGINT));
  auto exit = WaitExit(runner, 12);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGINT);
  EXPECT_EQ(exit->cause, ExitCause::kExit);
}

// Issue 44 (found by scripts/nemesis): a job that ended by itself before its agent fenced, but
// was reaped after, was reported "fenced": requeued and run a second time. Its own exit stands;
// a job the fence did kill is reported fenced.
TEST(JobRunnerTest, AFenceDoesNotClaimAJobThatHadEndedByItself) {
  TempDir dir;
  JobRunner runner;
  JobSpec ended{.job = 12, .command = "echo $$ > pid", .cwd = dir.path()};
  JobSpec running{.job = 13, .command = "touch ready; sleep 30", .cwd = dir.path()};
  ASSERT_TRUE(runner.Start(ended, Clock::now()).ok());
  ASSERT_TRUE(runner.Start(running, Clock::now()).ok());
  ASSERT_TRUE(WaitForFile(dir.path() / "ready"));
  // Job 12 has exited and is not reaped yet (nothing polled): a zombie.
  ASSERT_TRUE(Eventually([&] {
    const std::optional<std::string> pid = ReadFile(dir.path() / "pid");
    return pid && pid->size() > 1 && ProcessEnded(std::stoi(*pid));
  }));
  runner.KillAll(100ms, Clock::now(), ExitCause::kFenced);
  auto first = WaitExit(runner, 12);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->exit_code, 0);
  EXPECT_EQ(first->cause, ExitCause::kExit);
  auto second = WaitExit(runner, 13);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->cause, ExitCause::kFenced);
}

// Issue 44 (nemesis, seed 4045): a job that exits with a status as its agent fences — it had
// just finished, or its TERM handler exits — ended by itself; only a job the fence's signal
// ended is reported fenced (and requeued).
TEST(JobRunnerTest, AJobThatExitsWithAStatusAsItIsFencedEndedByItself) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 14,
               .command = "trap 'exit 0' TERM; touch ready; while :; do sleep 0.05; done",
               .cwd = dir.path()};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitForFile(dir.path() / "ready"));
  runner.KillAll(20s, Clock::now(), ExitCause::kFenced);
  auto exit = WaitExit(runner, 14);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(exit->cause, ExitCause::kExit);
}

TEST(JobRunnerTest, LeftoverProcessesOfAFinishedJobAreKilled) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 11, .command = "sleep 30 & echo $! > bg.pid", .cwd = dir.path()};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  auto exit = WaitExit(runner, 11);
  ASSERT_TRUE(exit);
  auto pid_text = ReadFile(dir.path() / "bg.pid");
  ASSERT_TRUE(pid_text);
  const pid_t background = std::stoi(*pid_text);
  EXPECT_TRUE(Eventually([&] { return ProcessEnded(background); }))
      << "the job's background process " << background << " still runs";
}

TEST(JobRunnerTest, EachJobIsItsOwnProcessGroup) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{
      .job = 12, .command = "cut -d' ' -f5 /proc/$$/stat > pgid; echo $$ > pid", .cwd = dir.path()};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitExit(runner, 12));
  auto pgid = ReadFile(dir.path() / "pgid");
  auto pid = ReadFile(dir.path() / "pid");
  ASSERT_TRUE(pgid && pid);
  EXPECT_EQ(std::stoi(*pgid), std::stoi(*pid));
  EXPECT_NE(std::stoi(*pgid), getpgrp());
}

// Without cgroups (R-SEC-3 fallback): a process group, memory as RLIMIT_DATA, one warning;
// CPU time and peak memory from the reaped leader's rusage (R-SEC-4).
TEST(JobRunnerTest, WithoutCgroupsSetupWarnsOnce) {
  JobRunner runner;
  ASSERT_TRUE(runner.Setup().ok());
  EXPECT_EQ(runner.containment(), CgroupMode::kNone);
  EXPECT_FALSE(runner.warning().empty());
}

TEST(JobRunnerTest, WithoutCgroupsTheMemoryLimitIsADataRlimit) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{
      .job = 13, .command = "ulimit -d", .cwd = dir.path(), .output = "limit", .mem_limit_mb = 64};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  ASSERT_TRUE(WaitExit(runner, 13));
  EXPECT_EQ(ReadFile(dir.path() / "limit"), "65536\n");  // KiB
}

TEST(JobRunnerTest, WithoutCgroupsCpuAndPeakComeFromRusage) {
  TempDir dir;
  JobRunner runner;
  // Busy until it has used 1 s of CPU (not wall time: the machine may be loaded).
  JobSpec spec{.job = 14,
               .argv = {"python3", "-c", "import time\nwhile time.process_time() < 1: pass"},
               .cwd = dir.path()};
  Status started = runner.Start(spec, Clock::now());
  ASSERT_TRUE(started.ok()) << started.message();  // once seen failing under load, cause unknown
  auto exit = WaitExit(runner, 14);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_GE(exit->cpu_seconds, 0.5);
  EXPECT_GT(exit->max_rss_mb, 1);
  EXPECT_LT(exit->max_rss_mb, 1024);
}

}  // namespace
}  // namespace sluice::agent

namespace sluice::agent {
namespace {

// Issue 48: a FIFO as output must not block the agent. Without a reader open() would block
// forever; with one the job's output would go to whoever reads it. Both are refused at once.
TEST(JobRunnerOutputTest, AFifoAsOutputFailsTheLaunchAtOnceWithOrWithoutAReader) {
  TempDir dir;
  const fs::path fifo = dir.path() / "f";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  JobRunner runner;
  const auto started = Clock::now();
  Status alone = runner.Start({.job = 1, .command = "echo x", .output = fifo.string()}, started);
  EXPECT_EQ(alone.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(alone.message().find("open output"), std::string::npos) << alone.message();
  EXPECT_FALSE(runner.IsRunning(1));

  // A reader that never reads: the open succeeds, and the kind check refuses it.
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  Status read = runner.Start({.job = 2, .command = "echo x", .output = fifo.string()}, started);
  EXPECT_EQ(read.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(read.message().find("must be regular files"), std::string::npos) << read.message();
  Status err = runner.Start(
      {.job = 3, .command = "echo x", .cwd = dir.path(), .output = "o", .error = fifo.string()},
      started);
  EXPECT_EQ(err.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(err.message().find("error " + fifo.string()), std::string::npos) << err.message();
  close(reader);
  // Well inside the launch deadline: nothing waited on the FIFO.
  EXPECT_LT(Clock::now() - started, 5s);
}

TEST(JobRunnerOutputTest, OutputIsCreatedWithTheJobsUmaskAndPrivateByDefault) {
  TempDir dir;
  JobRunner runner;
  ASSERT_TRUE(runner.Start({.job = 1, .command = "echo a", .cwd = dir.path(), .output = "p"},
                           Clock::now())
                  .ok());
  ASSERT_TRUE(runner.Start({.job = 2,
                            .command = "echo b; touch made",
                            .cwd = dir.path(),
                            .output = "q",
                            .umask = 022},
                           Clock::now())
                  .ok());
  ASSERT_TRUE(WaitExit(runner, 1));
  ASSERT_TRUE(WaitExit(runner, 2));
  const auto mode = [&](const char* name) {
    return fs::status(dir.path() / name).permissions() & fs::perms::all;
  };
  using fs::perms;
  EXPECT_EQ(mode("p"), perms::owner_read | perms::owner_write);
  EXPECT_EQ(mode("q"), perms::owner_read | perms::owner_write | perms::group_read |
                           perms::others_read);
  // The job itself runs with its umask too.
  EXPECT_EQ(mode("made"), perms::owner_read | perms::owner_write | perms::group_read |
                              perms::others_read);
}

TEST(JobRunnerOutputTest, AServerDefaultOutputThatCannotBeCreatedIsDiscardedNotFatal) {
  TempDir dir;
  JobRunner runner;
  JobSpec spec{.job = 4,
               .command = "echo ran > marker",
               .cwd = dir.path(),
               .output = "no/such/dir/sluice-%j.out",
               .output_default = true};
  ASSERT_TRUE(runner.Start(spec, Clock::now()).ok());
  auto exit = WaitExit(runner, 4);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 0);
  EXPECT_EQ(ReadFile(dir.path() / "marker"), "ran\n");
  // An explicit -o to the same place fails the launch, as before.
  spec.job = 5;
  spec.output_default = false;
  EXPECT_EQ(runner.Start(spec, Clock::now()).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace sluice::agent
