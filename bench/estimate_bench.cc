// Benchmarks of the controller's estimate refresh (R-UX-8, issue 17): the forward forecast
// (core/driver/forecast.h) on a Clone of the synthetic cluster of `sluice bench --estimate`
// (1,000 hosts each running one job, N pending jobs of 100 shapes, EASY backfill), with the
// controller's coarse steps (server/estimates.h kCoarseFraction). Only the forecast is timed,
// not the clone. `make bench`; figures in docs/performance.md. Not timed tests.
#include <benchmark/benchmark.h>

#include <optional>
#include <utility>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/driver/forecast.h"
#include "sim/synthetic.h"

namespace sluice::core {
namespace {

constexpr Instant kNow = 10;

// The state a refresh sees: the synthetic cluster after one committed cycle.
ClusterState EstimateCluster(int32_t hosts, int64_t pending) {
  sim::SyntheticOptions options{.hosts = hosts, .pending = pending, .shapes = 100};
  ClusterState state = std::move(ClusterState::Create(sim::SyntheticCluster(options))).value();
  const JobId next = sim::FillRunning(options, state).value();
  SLUICE_CHECK(sim::SubmitPending(options, sim::SyntheticShapes(options), next, state).ok());
  const Scheduler scheduler;
  Commit(scheduler.RunCycle(state, kNow), kNow, state);
  return state;
}

void BM_EstimateRefresh(benchmark::State& bench) {
  const ClusterState state = EstimateCluster(static_cast<int32_t>(bench.range(0)), bench.range(1));
  int64_t known = 0;
  for (auto _ : bench) {
    bench.PauseTiming();
    ClusterState copy = state.Clone();
    bench.ResumeTiming();
    auto estimates =
        EstimateStartsOn(std::move(copy), kNow, std::nullopt,
                         EstimateOptions{.cycle_at_now = true, .coarse_fraction = 0.05});
    known = 0;
    for (const auto& [id, estimate] : estimates) known += estimate.start ? 1 : 0;
    benchmark::DoNotOptimize(estimates);
  }
  bench.counters["known"] = static_cast<double>(known);
}

BENCHMARK(BM_EstimateRefresh)->Args({1000, 10000})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::core
