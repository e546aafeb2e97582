// Test helper: wait for a condition, never for a fixed time (STYLE.md, "Tests that do not
// depend on the machine's speed"). A test states what it waits for; the deadline only bounds a
// wait that would otherwise hang, so it is generous (a loaded machine is slow, not stuck) and
// a test that runs into it fails with its own message:
//
//   ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; }, 20s)) << c.Logs();
//
// A sleep is still right where time passing is the scenario itself (a lease that must expire,
// a credential that must age); the test then checks, or waits for, what that time brings.
// Thread-safety: plain functions; `condition` runs on the caller's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

namespace sluice::testing {

// Calls `condition` every `poll` until it returns true or `timeout` has passed; returns its
// last value (true: it held in time).
inline bool Eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(30),
                       std::chrono::milliseconds poll = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

// For a condition reached a step at a time (a thousand jobs ending one by one): polls until
// `condition` holds for as long as `progress` (a count that grows with each step, e.g. the jobs
// ended so far) keeps growing; gives up once it has not grown for `stall`, or after `limit`.
// A slow machine makes slow progress and is waited for; a stuck one makes none and fails.
inline bool EventuallyProgressing(const std::function<bool()>& condition,
                                  const std::function<int64_t()>& progress,
                                  std::chrono::milliseconds stall,
                                  std::chrono::milliseconds limit = std::chrono::minutes(10),
                                  std::chrono::milliseconds poll = std::chrono::milliseconds(200)) {
  const auto start = std::chrono::steady_clock::now();
  auto last_step = start;
  int64_t seen = progress();
  while (!condition()) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_step >= stall || now - start >= limit) return false;
    std::this_thread::sleep_for(poll);
    if (const int64_t p = progress(); p > seen) {
      seen = p;
      last_step = std::chrono::steady_clock::now();
    }
  }
  return true;
}

}  // namespace sluice::testing
