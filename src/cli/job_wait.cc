#include "cli/job_wait.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>

#include "client/wait_exit.h"

namespace sluice::cli {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

volatile std::sig_atomic_t interrupted = 0;

void OnInterrupt(int) { interrupted = 1; }

// Restores the previous SIGINT disposition on scope exit.
class InterruptGuard {
 public:
  InterruptGuard() {
    interrupted = 0;
    struct sigaction action {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_);
  }
  ~InterruptGuard() { sigaction(SIGINT, &previous_, nullptr); }

 private:
  struct sigaction previous_ {};
};

// Sleeps `total` in short steps; false when interrupted.
bool Pause(std::chrono::milliseconds total) {
  for (auto slept = 0ms; slept < total; slept += 20ms) {
    if (interrupted) return false;
    std::this_thread::sleep_for(20ms);
  }
  return !interrupted;
}

std::string Describe(const json& job, int code) {
  std::string text = job.value("state", "?");
  if (job.contains("cause") && job["cause"].is_string()) {
    text += " (" + job["cause"].get<std::string>() + ")";
  }
  return text + ", exit code " + std::to_string(code);
}

}  // namespace

int WaitForJob(client::RestClient& rest, int64_t id) {
  InterruptGuard guard;
  const std::string path = "/v1/jobs/" + std::to_string(id);
  auto interval = 100ms;
  auto unreachable_since = std::chrono::steady_clock::now();
  bool reachable = true;
  std::cerr << "<<Waiting for job " << id << " to end>>\n";
  while (true) {
    if (interrupted) break;
    Result<json> job = rest.Get(path);
    if (job) {
      reachable = true;
      const std::string state = job->value("state", "");
      if (client::IsEndState(state)) {
        const int code = client::WaitExitCode(*job);
        std::cerr << "<<Job " << id << " ended: " << Describe(*job, code) << ">>\n";
        return code;
      }
    } else if (job.error().code() != StatusCode::kUnavailable) {
      std::cerr << "error: " << job.error().message() << "\n";
      return 1;
    } else {
      if (reachable) unreachable_since = std::chrono::steady_clock::now();
      reachable = false;
      if (std::chrono::steady_clock::now() - unreachable_since > 60s) {
        std::cerr << "error: " << job.error().message() << " (gave up waiting for job " << id
                  << ")\n";
        return 1;
      }
    }
    if (!Pause(interval)) break;
    interval = std::min<std::chrono::milliseconds>(interval * 2, 1000ms);
  }
  Result<json> cancelled = rest.Post(path + "/cancel", json::object());
  std::cerr << "<<Interrupted: job " << id
            << (cancelled ? " is being cancelled"
                          : " could not be cancelled: " + cancelled.error().message())
            << ">>\n";
  return 130;
}

}  // namespace sluice::cli
