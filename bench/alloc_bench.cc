// Allocation cost per job (issue "Resource requests and the multi-host allocator"):
// ResreqAllocator::Nominate + Capacity::Debit against hosts (100 … 10,000) and tasks
// (1 … 1,024), with and without select[]. Each iteration places jobs into a fresh cycle
// capacity until the cluster is full, so the time per item is amortized over a filling
// cluster, as in a real cycle. Figures: docs/performance.md.
#include <benchmark/benchmark.h>

#include <string>

#include "core/alloc/capacity.h"
#include "core/alloc/resreq_allocator.h"
#include "core/cycle/events.h"
#include "core/model/cluster_state.h"

namespace sluice::core {
namespace {

// `hosts` hosts of `slots` slots and 64 GB; every other host has type=b, the rest type=a.
ClusterState Cluster(int32_t hosts, int32_t slots) {
  ClusterConfig config = UniformCluster(hosts, slots);
  for (size_t i = 0; i < config.hosts.size(); ++i) {
    config.hosts[i].attributes.emplace("type", i % 2 == 0 ? "a" : "b");
    config.hosts[i].resources["mem"] = 64000;
  }
  return std::move(ClusterState::Create(config)).value();
}

void PlaceUntilFull(benchmark::State& bench, int32_t slots, const std::string& resreq) {
  const int32_t hosts = static_cast<int32_t>(bench.range(0));
  const int32_t tasks = static_cast<int32_t>(bench.range(1));
  ClusterState state = Cluster(hosts, slots);
  JobSpec spec{.id = 1, .resreq = resreq, .min_tasks = tasks, .max_tasks = tasks};
  SLUICE_CHECK(Apply(JobSubmitted{spec}, 0, state).ok());
  const Job& job = *state.FindJob(1);
  ResreqAllocator allocator;
  int64_t placed = 0;
  for (auto _ : bench) {
    Capacity capacity(state);
    while (true) {
      AllocOutcome outcome = allocator.Nominate(job, state, capacity);
      if (!outcome.ok) break;
      capacity.Debit(outcome.allocation);
      ++placed;
    }
  }
  bench.SetItemsProcessed(placed);
  bench.counters["jobs_per_iteration"] =
      benchmark::Counter(static_cast<double>(placed), benchmark::Counter::kAvgIterations);
}

void BM_Place(benchmark::State& bench) { PlaceUntilFull(bench, 4, ""); }
void BM_PlaceSelect(benchmark::State& bench) { PlaceUntilFull(bench, 4, "select[type==b]"); }
void BM_PlaceSelectRusage(benchmark::State& bench) {
  PlaceUntilFull(bench, 4, "select[type==b] rusage[mem=1000]");
}
void BM_PlaceOneSlotHosts(benchmark::State& bench) { PlaceUntilFull(bench, 1, ""); }

void Shapes(benchmark::internal::Benchmark* b) {
  for (int hosts : {100, 1000, 10000}) {
    for (int tasks : {1, 16}) b->Args({hosts, tasks});
  }
}

BENCHMARK(BM_Place)->Apply(Shapes);
BENCHMARK(BM_PlaceSelect)->Apply(Shapes);
BENCHMARK(BM_PlaceSelectRusage)->Apply(Shapes);
BENCHMARK(BM_PlaceOneSlotHosts)->Args({10000, 1})->Args({10000, 1024})->Args({1000, 1024});

// A job that fits nowhere: the cost of the full scan and its explanation.
void BM_NominateFails(benchmark::State& bench) {
  ClusterState state = Cluster(static_cast<int32_t>(bench.range(0)), 4);
  JobSpec spec{.id = 1, .resreq = "select[type==b] span[hosts=1]", .min_tasks = 3, .max_tasks = 3};
  SLUICE_CHECK(Apply(JobSubmitted{spec}, 0, state).ok());
  Capacity capacity(state);
  for (HostIndex h = 0; h < capacity.host_count(); ++h) {
    capacity.Debit(Allocation{.hosts = {HostGrant{.host = h, .slots = 2}}});
  }
  ResreqAllocator allocator;
  for (auto _ : bench) {
    benchmark::DoNotOptimize(allocator.Nominate(*state.FindJob(1), state, capacity));
  }
}
BENCHMARK(BM_NominateFails)->Arg(100)->Arg(1000)->Arg(10000);

}  // namespace
}  // namespace sluice::core
