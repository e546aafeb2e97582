// The host's health program (R-OPS-4; docs/health-checks.md), NHC compatible: the controller
// says which program and how often (wire/health_report.h), the agent runs it and reports the
// result; a failure closes the host, a pass reopens it (the controller decides).
//
// One run (RunHealthCheck): the program alone, no arguments, as the agent's user (root on a
// real host: NHC needs it), stdin /dev/null, cwd as the agent's, a small fixed environment
// (HealthEnvironment), killed with its process group at the timeout. It FAILS when it exits
// non-zero, dies of a signal, is killed at the timeout, prints too much, cannot start, or
// prints a line starting with `ERROR` (NHC: `ERROR: nhc: Health check failed: ...`) whatever
// its exit status. The message (JudgeHealthRun) is its first `ERROR` line (stdout, then
// stderr), else its last line of stderr, else of stdout, else "exit N", "killed by signal N"
// or "timed out after N s"; clipped (wire::ClipHealthMessage).
//
// HealthChecker runs it on a thread of its own, so that a slow program never holds back a
// heartbeat or a launch: first at once when a check is configured (or changed), then every
// `interval` from the start of the previous run. It calls `on_change` with each result that
// differs from the previous one (and with the first).
// Thread-safety: HealthChecker's methods may be called from any thread; they take only the
// checker's own lock, briefly, so a caller may hold its locks meanwhile. `on_change` is called
// on the checker's thread without that lock (it may take the caller's locks).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/command_output.h"
#include "base/status.h"
#include "wire/health_report.h"  // core::HealthCheck too

namespace sluice::agent {

// "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/", "LC_ALL=C", "SLUICE_HOST=<host>".
std::vector<std::string> HealthEnvironment(const std::string& host);

// The verdict on a run as the header says (`run`'s error: it could not start).
wire::HealthReport JudgeHealthRun(const Result<CommandRun>& run, const core::HealthCheck& check);

// Runs `check` once on the calling thread (blocks up to its timeout).
wire::HealthReport RunHealthCheck(const core::HealthCheck& check, const std::string& host);

class HealthChecker {
 public:
  using OnChange = std::function<void(const wire::HealthReport&)>;

  // Starts the thread; no check runs until Configure gives one.
  HealthChecker(std::string host, OnChange on_change);
  // Stops the thread; waits for a run in progress (at most its timeout).
  ~HealthChecker();
  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;

  // The check to run from now on; another one than before runs at once. nullopt: none (the
  // last result is forgotten: nothing is left to report).
  void Configure(const std::optional<core::HealthCheck>& check);
  // The last result of the configured check; nullopt: none yet, or no check.
  std::optional<wire::HealthReport> Last() const;

 private:
  void Loop();

  const std::string host_;
  const OnChange on_change_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::optional<core::HealthCheck> check_;  // guarded by mu_
  uint64_t generation_ = 0;                 // guarded by mu_; bumped by each change of check_
  std::optional<wire::HealthReport> last_;  // guarded by mu_
  bool stop_ = false;                       // guarded by mu_
  std::thread thread_;                      // last: started once the rest is set up
};

}  // namespace sluice::agent
