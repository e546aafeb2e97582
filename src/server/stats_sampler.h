// The dashboard's time series (R-UI-3, GET /v1/stats): every `interval` the sampler takes a
// StatsSample of the cluster (slots and used slots, running / pending / held jobs, per queue
// the same, jobs started and ended since the previous sample) and keeps the last `capacity`
// samples in memory (default 10 s x 8640 = 24 h). Nothing is stored: a restarted or newly
// leading controller starts an empty series.
//
// Representation: a bounded ring (std::deque popped at the front) of samples in time order.
// Starts and ends are counted from the controller's job events (Controller::Subscribe), so a
// sample's `starts` is the number of RUNNING events since the sample before it.
// Thread-safety: Start/Stop from one thread; SampleNow, Json and the event listener from any
// thread (one mutex guards the ring; the counters are atomics).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace sluice::server {

class Controller;

struct QueueSample {
  std::string name;
  int64_t pending = 0;
  int64_t held = 0;
  int64_t running = 0;
  int64_t used_slots = 0;
};

// A user's jobs now (the overview's usage table): by state and the slots their starting and
// running jobs hold.
struct UserSample {
  int64_t running = 0;
  int64_t pending = 0;
  int64_t held = 0;
  int64_t slots = 0;
  bool operator==(const UserSample&) const = default;
};

// The job numbers of a sample (running, pending, held, overall and per queue) and the "now"
// counts come from one source, the book's job counts with unrecorded array elements
// (JobBook::CountsWithElements), so that the overview's cards, its tables and the queue rows
// agree: pending is the sum of pending_by_reason, which has no held job.
struct StatsSample {
  int64_t time = 0;        // Unix seconds
  int64_t hosts = 0;       // configured hosts
  int64_t hosts_ok = 0;    // hosts that accept work
  int64_t slots = 0;       // slots of hosts that accept work
  int64_t used_slots = 0;  // slots in use on every host
  int64_t running = 0;
  int64_t admitting = 0;  // of `running`, those placed but not yet confirmed by their agents
  int64_t pending = 0;
  int64_t held = 0;
  int64_t starts = 0;  // jobs started since the previous sample
  int64_t ends = 0;    // jobs ended since the previous sample
  std::vector<QueueSample> queues;
  // Filled for the "now" part of a reply only (Controller::SampleStats with counts).
  std::map<std::string, int64_t> jobs_by_state;
  std::map<std::string, int64_t> pending_by_reason;
  std::map<std::string, UserSample> users;
};

struct StatsOptions {
  int64_t interval_seconds = 10;
  size_t capacity = 8640;
};

class StatsSampler {
 public:
  StatsSampler(Controller& controller, StatsOptions options);
  ~StatsSampler();
  StatsSampler(const StatsSampler&) = delete;
  StatsSampler& operator=(const StatsSampler&) = delete;

  // Subscribes to job events and samples at once, then every interval, on a thread.
  void Start();
  void Stop();
  // Takes one sample now and appends it to the ring (the thread's step; tests call it).
  void SampleNow();
  // GET /v1/stats: `since` (Unix s; only later samples), `points` (at most this many, 1 ...
  // capacity, default 360: neighbouring samples merge — the last one's levels, the sums of
  // their starts and ends). Unknown parameters and bad numbers are kInvalidArgument.
  Result<nlohmann::json> Json(const std::map<std::string, std::string>& query);

  static nlohmann::json SampleJson(const StatsSample& sample);

 private:
  void Run();

  Controller& controller_;
  const StatsOptions options_;
  Mutex mu_{LockRank::kStatsSampler};
  std::condition_variable_any cv_;
  std::deque<StatsSample> ring_;  // GUARDED_BY(mu_)
  bool stopping_ = false;         // GUARDED_BY(mu_)
  std::atomic<int64_t> starts_ = 0;
  std::atomic<int64_t> ends_ = 0;
  int subscription_ = -1;
  std::thread thread_;
};

}  // namespace sluice::server
