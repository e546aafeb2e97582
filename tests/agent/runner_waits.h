// Waiting for a JobRunner's jobs in the agent tests: every wait is bounded.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/job_runner.h"

namespace sluice::agent {

// Exits a Poll returned while another job was awaited: Poll hands each exit out once, so
// without this a job that ended beside the awaited one (a loaded machine runs both before the
// first Poll) would never be seen. Kept per runner and per test.
struct UnclaimedExit {
  const JobRunner* runner;
  std::string test;
  JobExit exit;
};
inline std::vector<UnclaimedExit>& UnclaimedExits() {
  static std::vector<UnclaimedExit> exits;
  return exits;
}
inline std::string CurrentTestName() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info == nullptr ? "" : std::string(info->test_suite_name()) + "." + info->name();
}

// Polls until `job` has ended (at most 30 s); returns its exit. `run_limit_grace` is the
// runner's grace between a run limit's TERM and KILL.
inline std::optional<JobExit> WaitExit(
    JobRunner& runner, int64_t job,
    std::chrono::milliseconds run_limit_grace = std::chrono::milliseconds(200)) {
  const std::string test = CurrentTestName();
  std::vector<UnclaimedExit>& unclaimed = UnclaimedExits();
  for (auto it = unclaimed.begin(); it != unclaimed.end(); ++it) {
    if (it->runner == &runner && it->test == test && it->exit.job == job) {
      JobExit exit = it->exit;
      unclaimed.erase(it);
      return exit;
    }
  }
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    std::optional<JobExit> found;
    for (const JobExit& exit : runner.Poll(Clock::now(), run_limit_grace)) {
      if (exit.job == job && !found) {
        found = exit;
      } else {
        unclaimed.push_back({&runner, test, exit});
      }
    }
    if (found) return found;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

}  // namespace sluice::agent
