#include "server/estimates.h"

#include <time.h>

#include <chrono>
#include <map>
#include <optional>

#include "core/driver/forecast.h"
#include "server/memory_release.h"

namespace sluice::server {
namespace {

// The fewest estimated jobs whose forecast is followed by ReleaseFreedMemory.
constexpr int64_t kReleaseAfterEstimates = 1000;

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

}  // namespace

RefreshStats StartEstimator::Refresh() {
  RefreshStats stats;
  // 1. The copy, under the lock.
  MutexLock lock(ctx_.mu());
  const auto clone_start = std::chrono::steady_clock::now();
  const int64_t per_queue = ctx_.options().estimate_jobs_per_queue;
  bool cut = false;  // some queue has more waiting jobs than the forecast takes
  for (const core::Queue& queue : ctx_.state().topology().queues()) {
    cut = cut || (per_queue > 0 && static_cast<int64_t>(queue.pending.size()) > per_queue);
  }
  core::ClusterState copy = cut ? ctx_.state().CloneFirstWaiting(static_cast<size_t>(per_queue))
                                : ctx_.state().Clone();
  book_.ForgetNotEstimated(cut);
  const Instant now = ctx_.Now();
  stats.clone_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - clone_start)
          .count();
  lock.unlock();
  // 2. The forecast, without it.
  const double cpu_start = ThreadCpuMs();
  std::map<JobId, core::StartEstimate> estimates = core::EstimateStartsOn(
      std::move(copy), now, std::nullopt,
      core::EstimateOptions{.cycle_at_now = true, .coarse_fraction = kCoarseFraction});
  stats.forecast_cpu_ms = ThreadCpuMs() - cpu_start;
  stats.estimated = static_cast<int64_t>(estimates.size());
  // 3. Into the book.
  lock.lock();
  for (JobId id : estimated_) {
    if (estimates.contains(id)) continue;
    if (JobInfo* job = book_.Find(id)) job->estimate.reset();
  }
  estimated_.clear();
  for (auto& [id, estimate] : estimates) {
    JobInfo* job = book_.Find(id);
    if (job == nullptr) continue;
    job->estimate = std::make_shared<const core::StartEstimate>(std::move(estimate));
    estimated_.insert(id);
  }
  book_.SetUnestimated(cut, "not in the last forecast, which covered the first " +
                                std::to_string(per_queue) + " waiting jobs of each queue");
  return stats;
}

void StartEstimator::Start() {
  const int64_t interval = ctx_.options().estimate_interval_ms;
  if (interval <= 0 || thread_.joinable()) return;
  thread_ = std::thread([this, interval] {
    uint64_t seen = ~uint64_t{0};
    int64_t last_ms = 0;
    std::unique_lock lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(interval), [&] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      uint64_t changes = 0;
      int64_t now_ms = 0;
      {
        std::lock_guard ctx_lock(ctx_.mu());
        changes = ctx_.cycle().changes();
        now_ms = ctx_.NowMs();
      }
      if (changes != seen || now_ms - last_ms >= 10 * interval) {
        seen = changes;
        last_ms = now_ms;
        // A large forecast's copies go back to the system (issue 45: ~20 MB at a million
        // waiting jobs); a small one's are not worth the release.
        if (Refresh().estimated >= kReleaseAfterEstimates) ReleaseFreedMemory();
      }
      lock.lock();
    }
  });
}

void StartEstimator::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace sluice::server
