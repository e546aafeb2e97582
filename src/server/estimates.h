// StartEstimator: the controller's estimated start times of waiting jobs (R-UX-8), the same
// forward run of the core as `sluice sim --pending-at` (core/driver/forecast.h), in the
// background.
//
// Steps of Refresh: 1. under the context's lock, a copy of the core's state and the time
// (the only part that holds the lock): the whole state, or, when a queue has more waiting jobs
// than estimate_jobs_per_queue, only that many of each queue's first ones
// (ClusterState::CloneFirstWaiting; O(running + covered jobs) instead of O(jobs)); 2. without
// the lock, the forecast on the copy: a cycle at now, then the drive loop with run limits as
// runtimes and no arrivals; 3. under the lock again, each covered job's estimate into its
// JobInfo (views show it), the estimates of jobs no longer covered dropped, and what the
// others show (JobBook::SetUnestimated).
// The thread refreshes after something changed (ServerContext::changes), at most every
// estimate_interval_ms, and at least every 10 x that (time alone moves estimates).
// Never delays a cycle for longer than the clone.
// Thread-safety: Refresh takes the context's lock itself (REQUIRES it not held); the thread
// is started and stopped by the controller.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>

#include "base/mutex.h"
#include "server/context.h"
#include "server/job_book.h"

namespace sluice::server {

// The forecast is exact for the first hour and, beyond, steps by this fraction of the
// distance (core::EstimateOptions), so that an estimate a day away errs late by ~1.2 h at
// most. CPU per refresh at 10,000 pending jobs: 202 ms at 5 % against 307 ms at 2 %
// (docs/performance.md), within the 200 ms budget of issue 17 (under load).
inline constexpr double kCoarseFraction = 0.05;

struct RefreshStats {
  int64_t estimated = 0;       // waiting jobs estimated
  double clone_ms = 0;         // wall time under the lock
  double forecast_cpu_ms = 0;  // CPU time of the forecast (this thread's)
};

class StartEstimator {
 public:
  StartEstimator(ServerContext& ctx, JobBook& book) : ctx_(ctx), book_(book) {}
  ~StartEstimator() { Stop(); }

  void Start();
  void Stop();
  // One refresh now (the steps above).
  RefreshStats Refresh();

 private:
  ServerContext& ctx_;
  JobBook& book_;
  std::set<JobId> estimated_;  // jobs given an estimate by the last refresh (under ctx_.mu())
  Mutex mu_{LockRank::kEstimator};  // guards stopping_
  std::condition_variable_any cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sluice::server
