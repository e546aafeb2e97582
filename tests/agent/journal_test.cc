// The agent's journal (issue 19, exactly once): launches, exits and acknowledgements survive a
// reopen (an agent restart), a torn last line is skipped, the file is compacted, an unsafe or
// shared state directory is refused; and the leftover sweep kills the processes of recorded
// process groups and of the agent's job marker, sparing everything else. Real processes,
// bounded waits.
#include "agent/journal.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/leftover_sweep.h"
#include "testing/proc_scan.h"
#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using sluice::testing::Eventually;
using sluice::testing::ProcessRuns;
using sluice::testing::TempDir;

std::unique_ptr<AgentJournal> OpenOrDie(const fs::path& dir) {
  Result<std::unique_ptr<AgentJournal>> journal = AgentJournal::Open(dir.string());
  EXPECT_TRUE(journal.has_value()) << journal.error().message();
  return journal ? std::move(*journal) : nullptr;
}

wire::ExitReport Report(int64_t job) {
  return {.job = job,
          .exit_code = 3,
          .cause = wire::ExitCause::kMemLimit,
          .cpu_seconds = 1.5,
          .max_rss_mb = 64,
          .message = "memory limit 64 MB reached"};
}

size_t LineCount(const fs::path& file) {
  std::ifstream in(file);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

TEST(AgentJournalTest, LaunchesAndUnacknowledgedExitsSurviveAReopen) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "state" / "h1";
  {
    auto journal = OpenOrDie(dir);
    ASSERT_NE(journal, nullptr);
    EXPECT_TRUE(journal->instance().empty());
    ASSERT_TRUE(journal->SetInstance("abc").ok());
    ASSERT_TRUE(journal->RecordLaunch({.job = 1, .epoch = 4, .pgid = 100, .start = 7}).ok());
    ASSERT_TRUE(journal->RecordLaunch({.job = 2, .epoch = 4, .pgid = 200, .start = 8}).ok());
    ASSERT_TRUE(journal->RecordLaunch({.job = 3, .epoch = 4, .pgid = 300, .start = 9}).ok());
    ASSERT_TRUE(journal->RecordExit(Report(1)).ok());
    ASSERT_TRUE(journal->RecordExit(Report(3)).ok());
    ASSERT_TRUE(journal->RecordAck(3).ok());
  }
  struct stat info {};
  ASSERT_EQ(stat(dir.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  auto journal = OpenOrDie(dir);
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(journal->instance(), "abc");
  ASSERT_EQ(journal->launched().size(), 1u);
  const JournalLaunch& launch = journal->launched().at(2);
  EXPECT_EQ(launch.epoch, 4u);
  EXPECT_EQ(launch.pgid, 200);
  EXPECT_EQ(launch.start, 8u);
  ASSERT_EQ(journal->exits().size(), 1u);
  const wire::ExitReport& exit = journal->exits().at(1);
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_EQ(exit.cause, wire::ExitCause::kMemLimit);
  EXPECT_EQ(exit.cpu_seconds, 1.5);
  EXPECT_EQ(exit.max_rss_mb, 64);
  EXPECT_EQ(exit.message, "memory limit 64 MB reached");
  ASSERT_TRUE(journal->RecordGone(2).ok());
  EXPECT_TRUE(journal->launched().empty());
}

TEST(AgentJournalTest, ATornLastLineIsSkipped) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "s";
  {
    auto journal = OpenOrDie(dir);
    ASSERT_TRUE(journal->RecordExit(Report(5)).ok());
  }
  {
    std::ofstream out(dir / "journal", std::ios::app);
    out << "{\"exit\": 6, \"repo";  // the crash cut the line
  }
  auto journal = OpenOrDie(dir);
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(journal->skipped(), 1);
  EXPECT_EQ(journal->exits().size(), 1u);
  EXPECT_TRUE(journal->exits().contains(5));
}

TEST(AgentJournalTest, TheFileIsCompactedAsJobsComeAndGo) {
  TempDir tmp;
  auto journal = OpenOrDie(tmp.path() / "s");
  ASSERT_TRUE(journal->RecordLaunch({.job = 1}).ok());  // one job runs throughout
  for (int64_t job = 2; job < 1000; ++job) {
    ASSERT_TRUE(journal->RecordLaunch({.job = job, .pgid = 10}).ok());
    ASSERT_TRUE(journal->RecordExit(Report(job)).ok());
    ASSERT_TRUE(journal->RecordAck(job).ok());
  }
  EXPECT_LT(LineCount(tmp.path() / "s" / "journal"), 300u);
  journal.reset();
  journal = OpenOrDie(tmp.path() / "s");
  EXPECT_EQ(journal->launched().size(), 1u);
  EXPECT_TRUE(journal->exits().empty());
  EXPECT_EQ(LineCount(tmp.path() / "s" / "journal"), 1u);  // compacted at open
}

TEST(AgentJournalTest, ASharedOrUnsafeStateDirectoryIsRefused) {
  TempDir tmp;
  auto first = OpenOrDie(tmp.path() / "s");
  Result<std::unique_ptr<AgentJournal>> second = AgentJournal::Open((tmp.path() / "s").string());
  ASSERT_FALSE(second.has_value());
  EXPECT_NE(second.error().message().find("another agent"), std::string::npos);

  const fs::path open_dir = tmp.path() / "open";
  fs::create_directory(open_dir);
  fs::permissions(open_dir, fs::perms::all);
  Result<std::unique_ptr<AgentJournal>> unsafe = AgentJournal::Open(open_dir.string());
  ASSERT_FALSE(unsafe.has_value());
  EXPECT_NE(unsafe.error().message().find("writable by group or others"), std::string::npos)
      << unsafe.error().message();
}

// Starts `sleep 300` in a session of its own, with `marker` in its environment if not empty.
pid_t StartSleeper(const std::string& marker) {
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();
    std::string variable = std::string(kJobMarkerVariable) + "=" + marker;
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("300"), nullptr};
    char* const with[] = {variable.data(), nullptr};
    char* const without[] = {nullptr};
    execve("/bin/sleep", argv, marker.empty() ? without : with);
    _exit(127);
  }
  return pid;
}

// True when `pid` ended by a signal (it is reaped here).
bool Reaped(pid_t pid) {
  int status = 0;
  return Eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }) && WIFSIGNALED(status);
}

TEST(LeftoverSweepTest, KillsRecordedGroupsAndMarkedProcessesOnly) {
  const pid_t grouped = StartSleeper("");
  const pid_t marked = StartSleeper(JobMarker("inst1", 7));
  const pid_t other_instance = StartSleeper(JobMarker("inst2", 7));
  const pid_t bystander = StartSleeper("");
  for (pid_t pid : {grouped, marked, other_instance, bystander}) ASSERT_GT(pid, 0);
  // Each has exec'ed `sleep` (its environment, not the test's, is the one to scan).
  for (pid_t pid : {grouped, marked, other_instance, bystander}) {
    ASSERT_TRUE(Eventually([&] { return ProcessRuns(pid, {"sleep", "300"}); }))
        << "pid " << pid << " did not exec sleep";
  }
  std::map<int64_t, JournalLaunch> launched;
  launched[1] = {.job = 1, .pgid = grouped, .start = ProcessStartTime(grouped)};
  // A recorded group whose leader started later than recorded is a reused pid: spared.
  launched[2] = {.job = 2, .pgid = bystander, .start = ProcessStartTime(bystander) + 1000000};

  EXPECT_EQ(SweepLeftovers(launched, "inst1", {}, 5s), 2);
  EXPECT_TRUE(Reaped(grouped));
  EXPECT_TRUE(Reaped(marked));
  EXPECT_EQ(kill(other_instance, 0), 0) << "another agent's job was killed";
  EXPECT_EQ(kill(bystander, 0), 0) << "a reused process group was killed";
  for (pid_t pid : {other_instance, bystander}) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

// Issue 43: the processes of an adopted job (its marker names it) are spared.
TEST(LeftoverSweepTest, SparesTheMarkedProcessesOfAdoptedJobs) {
  const pid_t adopted = StartSleeper(JobMarker("inst1", 8));
  const pid_t left = StartSleeper(JobMarker("inst1", 9));
  for (pid_t pid : {adopted, left}) {
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(Eventually([&] { return ProcessRuns(pid, {"sleep", "300"}); }));
  }
  EXPECT_EQ(SweepLeftovers({}, "inst1", {8}, 5s), 1);
  EXPECT_TRUE(Reaped(left));
  EXPECT_EQ(kill(adopted, 0), 0) << "an adopted job's process was killed";
  kill(adopted, SIGKILL);
  waitpid(adopted, nullptr, 0);
}

// Issue 43: what a restarted agent needs to adopt a job survives a reopen and a compaction.
TEST(AgentJournalTest, ALaunchKeepsItsRunAndRunLimitDeadline) {
  TempDir tmp;
  {
    auto journal = OpenOrDie(tmp.path() / "s");
    ASSERT_TRUE(journal->RecordLaunch({.job = 4, .pgid = 77, .start = 5, .run = 12,
                                       .limit_at_ms = 123456,
                                       .interactive = true})
                    .ok());
  }
  auto journal = OpenOrDie(tmp.path() / "s");  // compacts at open
  ASSERT_TRUE(journal->launched().contains(4));
  EXPECT_EQ(journal->launched().at(4).run, 12u);
  EXPECT_EQ(journal->launched().at(4).limit_at_ms, 123456);
  EXPECT_TRUE(journal->launched().at(4).interactive);
  journal.reset();
  journal = OpenOrDie(tmp.path() / "s");
  EXPECT_EQ(journal->launched().at(4).run, 12u);
}

}  // namespace
}  // namespace sluice::agent
