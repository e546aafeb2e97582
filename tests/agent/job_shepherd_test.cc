// The job shepherd (issue 19): with an exit-record directory, the runner's child leads the job
// and records how it ended before it exits the same way; the record survives the agent's
// death, and a shepherd whose agent died kills its job and says so. With a lease file (issue
// 43) it kills only once the lease has run out, and a runner that adopts the orphaned shepherd
// (the next agent) keeps the job and sees its end. Real short processes; waits are bounded
// polls.
#include "agent/job_shepherd.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

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

JobRunner ShepherdedRunner(const TempDir& dir) {
  return JobRunner({.cgroup = {.mode = CgroupMode::kNone}, .exit_record_dir = dir.path().string()});
}

JobSpec Shell(int64_t job, const std::string& command) {
  return JobSpec{.job = job, .command = command};
}

TEST(JobShepherdTest, TheEndIsOnDiskBeforeTheRunnerSeesItAndTheExitIsMirrored) {
  TempDir dir;
  JobRunner runner = ShepherdedRunner(dir);
  const fs::path parent = dir.path() / "parent";
  ASSERT_TRUE(
      runner.Start(Shell(1, "echo $PPID > " + parent.string() + "; exit 5"), Clock::now()).ok());
  const pid_t shepherd = runner.Leader(1);
  ASSERT_GT(shepherd, 0);
  // The job's parent is the shepherd, not the agent.
  ASSERT_TRUE(Eventually([&] { return ReadFile(parent).value_or("").size() > 1; }));
  EXPECT_EQ(std::stoi(*ReadFile(parent)), shepherd);
  // Without a Poll nobody has waited for the shepherd: its record is there all the same.
  const fs::path record = dir.path() / "1";
  ASSERT_TRUE(Eventually([&] { return ReadExitRecord(record).has_value(); }));
  const ExitRecord recorded = *ReadExitRecord(record);
  EXPECT_EQ(recorded.exit_code, 5);
  EXPECT_FALSE(recorded.signal);
  EXPECT_FALSE(recorded.agent_died);

  const std::optional<JobExit> exit = WaitExit(runner, 1);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 5);
  EXPECT_FALSE(exit->signal);
  // The job's own memory, not the shepherd's (a copy of the process it was forked from).
  EXPECT_LT(exit->max_rss_mb, 64);
  EXPECT_FALSE(fs::exists(record)) << "the runner removes a record once it has the exit";
}

TEST(JobShepherdTest, AJobKilledByASignalEndsItsShepherdByTheSameSignal) {
  TempDir dir;
  JobRunner runner = ShepherdedRunner(dir);
  ASSERT_TRUE(runner.Start(Shell(2, "exec sleep 30"), Clock::now()).ok());
  // The job's shell has exec'ed its sleep (the shepherd's pid is the job's process group).
  const pid_t group = runner.Leader(2);
  ASSERT_GT(group, 0);
  ASSERT_TRUE(Eventually([&] { return !ProcessesRunning({"sleep", "30"}, group).empty(); }))
      << "the job did not exec `sleep 30`";
  ASSERT_TRUE(runner.Kill(2, 5s, Clock::now()));
  const std::optional<JobExit> exit = WaitExit(runner, 2);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGTERM);
  EXPECT_FALSE(exit->exit_code);
  EXPECT_EQ(exit->cause, ExitCause::kKilled);
}

// The "agent" is a forked child of the test that starts the job and is SIGKILLed: its job's
// shepherd kills the job and records that the agent died.
TEST(JobShepherdTest, WhenTheAgentDiesTheShepherdKillsTheJobAndSaysWhy) {
  TempDir dir;
  const fs::path ready = dir.path() / "ready";
  const pid_t agent = fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    JobRunner runner = ShepherdedRunner(dir);
    const bool started =
        runner.Start(Shell(3, "touch " + ready.string() + "; exec sleep 30"), Clock::now()).ok();
    if (started) pause();
    _exit(started ? 0 : 1);
  }
  ASSERT_TRUE(Eventually([&] { return fs::exists(ready); }));
  kill(agent, SIGKILL);
  int status = 0;
  waitpid(agent, &status, 0);
  const fs::path record = dir.path() / "3";
  ASSERT_TRUE(Eventually([&] { return ReadExitRecord(record).has_value(); }));
  EXPECT_EQ(ReadExitRecord(record)->signal, SIGKILL);
  EXPECT_TRUE(ReadExitRecord(record)->agent_died);
}

// --- Issue 43: jobs outlive their agent for the lease, and are adopted ---------------------------

JobRunner LeasedRunner(const TempDir& dir) {
  return JobRunner({.cgroup = {.mode = CgroupMode::kNone},
                    .exit_record_dir = dir.path().string(),
                    .lease_file = (dir.path() / "lease").string()});
}

void WriteLease(const TempDir& dir, TimePoint deadline) {
  ASSERT_TRUE(WriteLeaseDeadline((dir.path() / "lease").string(), deadline).ok());
}

// An "agent" (a forked child of the test) starts `command` as job `job` under a leased
// runner and is SIGKILLed once the job has written its parent's pid to `pid`: returns that
// pid, the orphaned shepherd's (0 on failure).
pid_t OrphanedShepherd(const TempDir& dir, int64_t job, const std::string& command) {
  const fs::path pid_file = dir.path() / "pid";
  const pid_t agent = fork();
  if (agent < 0) return 0;
  if (agent == 0) {
    JobRunner runner = LeasedRunner(dir);
    const bool started =
        runner.Start(Shell(job, "echo $PPID > " + pid_file.string() + "; " + command), Clock::now())
            .ok();
    if (started) pause();
    _exit(started ? 0 : 1);
  }
  const bool ready = Eventually([&] { return ReadFile(pid_file).value_or("").size() > 1; });
  kill(agent, SIGKILL);
  int status = 0;
  waitpid(agent, &status, 0);
  return ready ? static_cast<pid_t>(std::stol(*ReadFile(pid_file))) : 0;
}

JournalLaunch LaunchOf(int64_t job, pid_t shepherd) {
  return {.job = job, .pgid = shepherd, .start = ProcessStartTime(shepherd)};
}

TEST(JobShepherdTest, AnOrphanedShepherdKeepsTheJobUntilTheLeaseRunsOutThenKillsItAndSaysWhy) {
  TempDir dir;
  const TimePoint deadline = Clock::now() + 3s;
  WriteLease(dir, deadline);
  const pid_t shepherd = OrphanedShepherd(dir, 4, "exec sleep 30");
  ASSERT_GT(shepherd, 0);
  const JournalLaunch launch = LaunchOf(4, shepherd);
  const fs::path record = dir.path() / "4";
  // Nothing is killed while the lease holds (a margin for the shepherd's 100 ms reads).
  while (Clock::now() < deadline - 300ms) {
    ASSERT_TRUE(ShepherdAlive(launch)) << "the job died with its agent, inside the lease";
    ASSERT_FALSE(fs::exists(record));
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(Eventually([&] { return ReadExitRecord(record).has_value(); }, 10s));
  EXPECT_GE(Clock::now(), deadline);
  EXPECT_EQ(ReadExitRecord(record)->signal, SIGKILL);
  EXPECT_TRUE(ReadExitRecord(record)->agent_died);
  EXPECT_TRUE(Eventually([&] { return !ShepherdAlive(launch); }));
}

TEST(JobShepherdTest, AnAdoptedJobRunsOnWhileItsAdopterRenewsTheLeaseAndItsEndIsReported) {
  TempDir dir;
  const TimePoint first_deadline = Clock::now() + 2s;
  WriteLease(dir, first_deadline);
  const fs::path go = dir.path() / "go";
  const pid_t shepherd = OrphanedShepherd(
      dir, 5, "while [ ! -e " + go.string() + " ]; do sleep 0.05; done; exit 7");
  ASSERT_GT(shepherd, 0);
  const JournalLaunch launch = LaunchOf(5, shepherd);

  JobRunner adopter = LeasedRunner(dir);
  ASSERT_TRUE(adopter.Adopt({.job = 5, .run = 9, .shepherd = shepherd, .start = launch.start,
                             .now = Clock::now()})
                  .ok());
  EXPECT_TRUE(adopter.IsRunning(5));
  // The adopter's renewals carry the job past the first deadline.
  while (Clock::now() < first_deadline + 1s) {
    WriteLease(dir, Clock::now() + 2s);
    ASSERT_TRUE(ShepherdAlive(launch)) << "the adopted job was killed";
    ASSERT_TRUE(adopter.Poll(Clock::now(), 200ms).empty());
    std::this_thread::sleep_for(100ms);
  }
  std::ofstream(go).put('\n');
  const std::optional<JobExit> exit = WaitExit(adopter, 5);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->exit_code, 7);
  EXPECT_FALSE(exit->signal);
  EXPECT_EQ(exit->cause, ExitCause::kExit);
  EXPECT_EQ(exit->run, 9u);
  EXPECT_FALSE(fs::exists(dir.path() / "5")) << "the adopter removes the record it reported";
}

TEST(JobShepherdTest, AnAdoptedJobIsKilledWhenNobodyRenewsTheLeaseAndReportedAsFenced) {
  TempDir dir;
  WriteLease(dir, Clock::now() + 2s);
  const pid_t shepherd = OrphanedShepherd(dir, 6, "exec sleep 30");
  ASSERT_GT(shepherd, 0);
  JobRunner adopter = LeasedRunner(dir);
  ASSERT_TRUE(adopter.Adopt({.job = 6, .shepherd = shepherd,
                             .start = ProcessStartTime(shepherd), .now = Clock::now()})
                  .ok());
  const std::optional<JobExit> exit = WaitExit(adopter, 6);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(exit->cause, ExitCause::kFenced);  // the controller requeues it: it did not end
  EXPECT_FALSE(exit->message.empty());
}

TEST(JobShepherdTest, AdoptRefusesAPidThatNamesAnotherProcess) {
  TempDir dir;
  JobRunner adopter = LeasedRunner(dir);
  const Status refused = adopter.Adopt({.job = 8,
                                        .shepherd = getpid(),
                                        .start = ProcessStartTime(getpid()) + 1,
                                        .now = Clock::now()});
  EXPECT_EQ(refused.code(), StatusCode::kNotFound);
  EXPECT_FALSE(adopter.IsRunning(8));
}

TEST(JobShepherdTest, ReadExitRecordsTakesEveryRecordAndSkipsWhatItCannotRead) {
  TempDir dir;
  std::ofstream(dir.path() / "7") << "e 0 0 1500000 2048\n";
  std::ofstream(dir.path() / "8") << "s 9 1 0 0\n";
  std::ofstream(dir.path() / "9") << "e 0";  // torn
  std::ofstream(dir.path() / "notes") << "e 0 0 0 0\n";
  const std::map<int64_t, ExitRecord> records = ReadExitRecords(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records.at(7).exit_code, 0);
  EXPECT_DOUBLE_EQ(records.at(7).cpu_seconds, 1.5);
  EXPECT_DOUBLE_EQ(records.at(7).max_rss_mb, 2);
  EXPECT_EQ(records.at(8).signal, SIGKILL);
  EXPECT_TRUE(records.at(8).agent_died);
  EXPECT_FALSE(fs::exists(dir.path() / "7"));
  EXPECT_FALSE(fs::exists(dir.path() / "9"));
  EXPECT_TRUE(fs::exists(dir.path() / "notes"));
  EXPECT_TRUE(ReadExitRecords((dir.path() / "missing").string()).empty());
}

}  // namespace
}  // namespace sluice::agent
