// Benchmarks of the hot paths at scale (issue 8), on the synthetic cluster of `sluice bench`
// (src/sim/synthetic.h): a full cycle with and without explanations, a cycle with free
// capacity, and a single nomination that scans every host (the cost of an unsatisfiable-cache
// miss). `make bench`; figures in docs/performance.md. Not timed tests: nothing asserts.
#include <benchmark/benchmark.h>

#include <memory>

#include "core/alloc/resreq_allocator.h"
#include "core/cycle/scheduler.h"
#include "sim/synthetic.h"

namespace sluice::core {
namespace {

// A synthetic cluster of `hosts` hosts with `pending` jobs of 1,000 shapes, classified.
ClusterState Synthetic(int32_t hosts, int64_t pending, int64_t free_slots) {
  sim::SyntheticOptions options{.hosts = hosts, .pending = pending, .free_slots = free_slots};
  ClusterState state = std::move(ClusterState::Create(sim::SyntheticCluster(options))).value();
  const JobId next = sim::FillRunning(options, state).value();
  SLUICE_CHECK(sim::SubmitPending(options, sim::SyntheticShapes(options), next, state).ok());
  Scheduler().RunCycle(state, 10);  // classification
  state.MarkClassified();
  return state;
}

void BM_SyntheticCycle(benchmark::State& bench, bool explain) {
  ClusterState state =
      Synthetic(static_cast<int32_t>(bench.range(0)), bench.range(1), bench.range(2));
  Scheduler scheduler;
  int64_t started = 0;
  for (auto _ : bench) {
    CycleResult result = scheduler.RunCycle(state, 10, CycleOptions{.explain = explain});
    started += result.stats.started;
    benchmark::DoNotOptimize(result);
  }
  bench.SetItemsProcessed(bench.iterations() * bench.range(1));
  bench.counters["starts_per_cycle"] =
      benchmark::Counter(static_cast<double>(started), benchmark::Counter::kAvgIterations);
}

// One nomination that fails after scanning every host: what an unsatisfiable-cache miss
// costs. Arg: 0 a static select (memoized verdicts), 1 a select on a free amount (evaluated
// per host), 2 the reference path (plain lookups, no fast paths), 3 `type==gpu`, which names
// the gpu resource but compares the word (memoized per host since issue 8's second pass),
// 4 the free-amount select of 1 for a caller that needs no reasons (NominateUnexplained:
// only hosts with room are visited; a full cluster costs an index walk), 5 a select that
// only compares a free amount with a constant (read from the Capacity since issue 45).
void BM_FailingNomination(benchmark::State& bench) {
  ClusterState state = Synthetic(static_cast<int32_t>(bench.range(0)), 0, 0);
  const char* texts[] = {"select[type==arm && model==m3] rusage[mem=1000]",
                         "select[mem>4000 && type!=gpu]",
                         "select[type==arm && model==m3] rusage[mem=1000]",
                         "select[type==gpu] rusage[gpu=1]", "select[mem>4000 && type!=gpu]",
                         "select[mem>4000]"};
  const int64_t which = bench.range(1);
  JobSpec spec{
      .id = 1000000, .queue = "q1", .resreq = texts[which], .min_tasks = 4, .max_tasks = 4};
  SLUICE_CHECK(state.Submit(spec).ok());
  const Job& job = *state.FindJob(spec.id);
  ResreqAllocator allocator(/*reference=*/which == 2);
  Capacity capacity(state);
  for (auto _ : bench) {
    AllocOutcome outcome = which == 4 ? allocator.NominateUnexplained(job, state, capacity)
                                      : allocator.Nominate(job, state, capacity);
    benchmark::DoNotOptimize(outcome);
  }
}

BENCHMARK_CAPTURE(BM_SyntheticCycle, full, false)
    ->Args({10000, 100000, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SyntheticCycle, full_explain, true)
    ->Args({10000, 100000, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SyntheticCycle, free, false)
    ->Args({10000, 100000, 20000})
    ->Unit(benchmark::kMillisecond);
// Issue 45's case at a tenth of the jobs: thousands of starts, every other job explained.
BENCHMARK_CAPTURE(BM_SyntheticCycle, free_explain, true)
    ->Args({10000, 100000, 20000})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FailingNomination)
    ->Args({10000, 0})
    ->Args({10000, 1})
    ->Args({10000, 2})
    ->Args({10000, 3})
    ->Args({10000, 4})
    ->Args({10000, 5})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sluice::core
