// Waiting for a JobRunner's jobs in the agent tests: every wait is bounded.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>

#include "agent/job_runner.h"

namespace sluice::agent {

// Polls until `job` has ended (at most 30 s); returns its exit. `run_limit_grace` is the
// runner's grace between a run limit's TERM and KILL.
inline std::optional<JobExit> WaitExit(
    JobRunner& runner, int64_t job,
    std::chrono::milliseconds run_limit_grace = std::chrono::milliseconds(200)) {
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    for (const JobExit& exit : runner.Poll(Clock::now(), run_limit_grace)) {
      if (exit.job == job) return exit;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

}  // namespace sluice::agent
