// JobRunner::OnLeaderExit (issue 19, exactly once): the agent journals a job's exit the moment
// its leader is seen to have exited, before the rest of the job is killed and reaped, with the
// status and cause Poll later reports.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>
#include <vector>

#include "agent/job_runner.h"
#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;

TEST(LeaderExitTest, TheCallbackSeesTheExitBeforePollReportsIt) {
  sluice::testing::TempDir dir;
  JobRunner runner;
  std::vector<JobExit> seen;
  std::vector<JobExit> reported;
  runner.OnLeaderExit([&](const JobExit& exit) {
    for (const JobExit& r : reported) EXPECT_NE(r.job, exit.job) << "seen after Poll reported it";
    seen.push_back(exit);
  });
  ASSERT_TRUE(runner.Start({.job = 1, .command = "exit 3", .cwd = dir.path()}, Clock::now()).ok());
  ASSERT_TRUE(
      runner.Start({.job = 2, .command = "kill -9 $$", .cwd = dir.path()}, Clock::now()).ok());
  const auto deadline = Clock::now() + 20s;
  while (reported.size() < 2 && Clock::now() < deadline) {
    for (const JobExit& exit : runner.Poll(Clock::now(), 1s)) reported.push_back(exit);
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_EQ(reported.size(), 2u);
  ASSERT_EQ(seen.size(), 2u);
  for (const JobExit& exit : seen) {
    if (exit.job == 1) {
      EXPECT_EQ(exit.exit_code, 3);
      EXPECT_FALSE(exit.signal);
    } else {
      EXPECT_EQ(exit.signal, SIGKILL);
      EXPECT_FALSE(exit.exit_code);
    }
    EXPECT_EQ(exit.cause, ExitCause::kExit);
  }
}

}  // namespace
}  // namespace sluice::agent
