#include "cli/bench_estimate.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/cycle/scheduler.h"
#include "core/driver/forecast.h"

namespace sluice::cli {
namespace {

double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int RunEstimateBench(core::ClusterState state, Instant now, int runs, bool json,
                     double coarse_fraction) {
  const core::Scheduler scheduler;
  core::Commit(scheduler.RunCycle(state, now), now, state);
  std::vector<double> clone_ms;
  std::vector<double> forecast_cpu_ms;
  int64_t estimated = 0;
  int64_t known = 0;
  for (int run = 0; run < std::max(runs, 1); ++run) {
    const double clone_start = CpuMs();
    core::ClusterState copy = state.Clone();
    clone_ms.push_back(CpuMs() - clone_start);
    const double start = CpuMs();
    const auto estimates = core::EstimateStartsOn(
        std::move(copy), now, std::nullopt,
        core::EstimateOptions{.cycle_at_now = true, .coarse_fraction = coarse_fraction});
    forecast_cpu_ms.push_back(CpuMs() - start);
    estimated = static_cast<int64_t>(estimates.size());
    known = std::count_if(estimates.begin(), estimates.end(),
                          [](const auto& e) { return e.second.start.has_value(); });
  }
  if (json) {
    nlohmann::ordered_json out;
    out["estimated"] = estimated;
    out["known"] = known;
    out["clone_cpu_ms"] = Median(clone_ms);
    out["forecast_cpu_ms"] = Median(forecast_cpu_ms);
    out["forecast_cpu_ms_all"] = forecast_cpu_ms;
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("estimates      %lld waiting jobs, %lld with a start time\n",
              static_cast<long long>(estimated), static_cast<long long>(known));
  std::printf("clone          %.1f ms CPU (under the controller's lock)\n", Median(clone_ms));
  std::printf("forecast       %.1f ms CPU median of %zu (without the lock)\n",
              Median(forecast_cpu_ms), forecast_cpu_ms.size());
  return 0;
}

}  // namespace sluice::cli
