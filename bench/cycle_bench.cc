// Benchmarks of the scheduling cycle's hot paths (`make bench`). Figures and the commands
// that reproduce them are in docs/performance.md. Not timed tests: nothing here asserts.
#include <benchmark/benchmark.h>

#include <random>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/model/cluster_state.h"

namespace sluice::core {
namespace {

// `hosts` one-slot hosts, all busy with one running job each except `free` of them, and
// `pending` jobs of 1..64 tasks waiting: a full cluster where little or nothing can start.
ClusterState BusyCluster(int32_t hosts, int32_t free, int64_t pending, PolicyKind policy) {
  ClusterConfig config = UniformCluster(hosts, 1);
  config.queues[0].policy = policy;
  ClusterState state = std::move(ClusterState::Create(config)).value();
  JobId id = 1;
  for (int32_t h = 0; h < hosts - free; ++h, ++id) {
    JobSpec spec{.id = id, .run_limit = 100 + h};
    SLUICE_CHECK(Apply(JobSubmitted{spec}, 0, state).ok());
    state.Start(id, Allocation{{HostGrant{static_cast<HostIndex>(h), 1}}}, 0);
  }
  std::mt19937_64 rng(1);
  for (int64_t i = 0; i < pending; ++i, ++id) {
    const int32_t tasks = 1 + static_cast<int32_t>(rng() % 64);
    JobSpec spec{.id = id,
                 .min_tasks = tasks,
                 .max_tasks = tasks,
                 .run_limit = 60 + static_cast<Duration>(rng() % 3600),
                 .submit_time = 1};
    SLUICE_CHECK(Apply(JobSubmitted{spec}, 1, state).ok());
  }
  state.MarkClassified();
  return state;
}

void BM_CycleFullCluster(benchmark::State& bench, PolicyKind policy, bool explain) {
  ClusterState state = BusyCluster(static_cast<int32_t>(bench.range(0)), 0, bench.range(1), policy);
  Scheduler scheduler;
  for (auto _ : bench) {
    CycleResult result = scheduler.RunCycle(state, 2, CycleOptions{.explain = explain});
    benchmark::DoNotOptimize(result);
  }
  bench.SetItemsProcessed(bench.iterations() * bench.range(1));
}

void BM_CycleWithFreeSlots(benchmark::State& bench) {
  const int32_t hosts = static_cast<int32_t>(bench.range(0));
  ClusterState state = BusyCluster(hosts, hosts / 4, bench.range(1), PolicyKind::kEasyBackfill);
  Scheduler scheduler;
  int64_t started = 0;
  for (auto _ : bench) {
    CycleResult result = scheduler.RunCycle(state, 2);
    started += result.stats.started;
    benchmark::DoNotOptimize(result);
  }
  bench.counters["starts_per_cycle"] =
      benchmark::Counter(static_cast<double>(started), benchmark::Counter::kAvgIterations);
}

BENCHMARK_CAPTURE(BM_CycleFullCluster, fifo, PolicyKind::kFifo, false)
    ->Args({240, 1000})
    ->Args({240, 100000})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CycleFullCluster, easy, PolicyKind::kEasyBackfill, false)
    ->Args({240, 1000})
    ->Args({240, 100000})
    ->Args({10000, 100000})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_CycleFullCluster, easy_explain, PolicyKind::kEasyBackfill, true)
    ->Args({240, 1000})
    ->Args({240, 100000})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CycleWithFreeSlots)
    ->Args({240, 1000})
    ->Args({10000, 100000})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::core
