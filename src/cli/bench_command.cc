// `sluice bench`: full scheduling cycles of the real core on a synthetic cluster (issue 8).
//
// Builds the cluster and its running jobs (src/sim/synthetic.h), measures resident memory,
// submits the pending jobs, measures again (the difference over the pending count is the
// core's bytes per pending job), runs one cycle that classifies every new job (reported
// separately), then --cycles more on the same state — RunCycle is pure and nothing is
// committed, so each repeats the same decisions — and reports the median. Like a driver
// (core/driver/drive_loop.h), it keeps a CycleWorkspace and recycles each result into it.
// Figures and the commands that reproduce them: docs/performance.md.
#include <fmt/format.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/bench_estimate.h"
#include "cli/commands.h"
#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "sim/synthetic.h"

namespace sluice::cli {
namespace {

struct BenchFlags {
  sim::SyntheticOptions synthetic;
  std::string policy = "easy_backfill";
  int32_t cycles = 5;
  bool explain = false;
  bool json = false;
  bool estimate = false;          // time estimated-start refreshes instead (bench_estimate.h)
  double coarse_fraction = 0.05;  // the controller's kCoarseFraction (server/estimates.h)
  std::string array;              // one job array instead of the synthetic pending jobs (R-UX-3)
};

// Submits one 1-slot job array (`--array 1-1000000%1000`): its elements are the pending
// jobs, so the memory figure is bytes per pending element. Returns the element count.
Result<int64_t> SubmitArray(const std::string& array, JobId id, core::ClusterState& state) {
  core::JobSpec spec;
  spec.id = id;
  spec.user = "u1";
  spec.run_limit = 3600;
  SLUICE_RETURN_IF_ERROR(core::Apply(core::JobSubmitted{spec, array}, 0, state));
  return state.FindArray(id)->size();
}

// Resident set size now, in bytes (Linux /proc; 0 when unreadable).
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0;
  int64_t resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * sysconf(_SC_PAGESIZE);
}

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU time of this thread: on a shared machine it is what the cycle would take alone.
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The synthetic cluster with its running and pending jobs, and what building it cost.
struct BenchState {
  core::ClusterState state;
  std::vector<sim::SyntheticShape> shapes;
  double build_seconds = 0;
  int64_t pending_bytes = 0;  // resident memory the pending jobs added
};

// Builds the cluster, fills it with running jobs and submits the pending ones (or the
// array, whose element count then becomes flags.synthetic.pending). Prints why on failure.
std::optional<BenchState> BuildBenchState(BenchFlags& flags) {
  const sim::SyntheticOptions& options = flags.synthetic;
  Result<core::ClusterState> created = core::ClusterState::Create(sim::SyntheticCluster(options));
  if (!created) {
    std::fprintf(stderr, "sluice bench: %s\n", created.error().ToString().c_str());
    return std::nullopt;
  }
  BenchState bench{.state = std::move(created).value(), .shapes = sim::SyntheticShapes(options)};
  Result<JobId> next_id = sim::FillRunning(options, bench.state);
  if (!next_id) {
    std::fprintf(stderr, "sluice bench: running jobs: %s\n", next_id.error().ToString().c_str());
    return std::nullopt;
  }
  const int64_t rss_before = ResidentBytes();
  const auto build_start = std::chrono::steady_clock::now();
  if (!flags.array.empty()) {
    Result<int64_t> elements = SubmitArray(flags.array, *next_id, bench.state);
    if (!elements) {
      std::fprintf(stderr, "sluice bench: --array: %s\n", elements.error().ToString().c_str());
      return std::nullopt;
    }
    flags.synthetic.pending = *elements;
  } else if (Status status = sim::SubmitPending(options, bench.shapes, *next_id, bench.state);
             !status.ok()) {
    std::fprintf(stderr, "sluice bench: pending jobs: %s\n", status.ToString().c_str());
    return std::nullopt;
  }
  bench.build_seconds = Seconds(std::chrono::steady_clock::now() - build_start);
  bench.pending_bytes = ResidentBytes() - rss_before;
  return bench;
}

// What the timed cycles measured.
struct CycleFigures {
  double first_seconds = 0;  // the cycle that classifies every job
  int64_t unschedulable = 0;
  std::vector<double> times;
  double cycle = 0;      // median wall time
  double cycle_cpu = 0;  // median thread CPU time
  core::CycleStats stats;
  int64_t decisions = 0;
};

CycleFigures TimeCycles(core::ClusterState& state, const BenchFlags& flags) {
  core::Scheduler scheduler;
  const Instant now = 10;
  const core::CycleOptions cycle_options{.explain = flags.explain};
  CycleFigures figures;
  core::CycleWorkspace workspace;
  auto start = std::chrono::steady_clock::now();
  {
    core::CycleResult first = scheduler.RunCycle(state, now, cycle_options, &workspace);
    figures.first_seconds = Seconds(std::chrono::steady_clock::now() - start);
    figures.unschedulable = first.stats.failed;
    workspace.Recycle(std::move(first));
  }
  // The first cycle classified every job; later cycles see them classified. Jobs it found
  // unschedulable stay pending here (nothing is committed) and are explained as such.
  state.MarkClassified();
  std::vector<double> cpu_times;
  for (int32_t c = 0; c < std::max(flags.cycles, 1); ++c) {
    start = std::chrono::steady_clock::now();
    const double cpu_start = CpuSeconds();
    core::CycleResult result = scheduler.RunCycle(state, now, cycle_options, &workspace);
    cpu_times.push_back(CpuSeconds() - cpu_start);
    figures.times.push_back(Seconds(std::chrono::steady_clock::now() - start));
    figures.stats = result.stats;
    figures.decisions = static_cast<int64_t>(result.decisions.size());
    workspace.Recycle(std::move(result));  // untimed, as the result's destruction was
  }
  figures.cycle = Median(figures.times);
  figures.cycle_cpu = Median(cpu_times);
  return figures;
}

void PrintJson(const BenchFlags& flags, const BenchState& bench, const CycleFigures& f,
               double bytes_per_job) {
  const sim::SyntheticOptions& options = flags.synthetic;
  const double pending = static_cast<double>(options.pending);
  nlohmann::ordered_json out;
  out["cycle_seconds"] = f.cycle;
  out["evaluations_per_second"] = f.cycle > 0 ? pending / f.cycle : 0;
  out["starts_per_second"] = f.cycle > 0 ? static_cast<double>(f.stats.started) / f.cycle : 0;
  out["peak_rss_mb"] = PeakRssMb();
  out["bytes_per_pending_job"] = bytes_per_job;
  out["hosts"] = options.hosts;
  out["pending"] = options.pending;
  out["shapes"] = bench.shapes.size();
  out["policy"] = flags.policy;
  if (!flags.array.empty()) out["array"] = flags.array;
  out["explain"] = flags.explain;
  out["cycles"] = f.times.size();
  out["cycle_seconds_all"] = f.times;
  out["cycle_cpu_seconds"] = f.cycle_cpu;
  out["first_cycle_seconds"] = f.first_seconds;
  out["build_seconds"] = bench.build_seconds;
  out["unschedulable"] = f.unschedulable;
  out["started"] = f.stats.started;
  out["allocation_attempts"] = f.stats.evaluated;
  out["allocator_calls"] = f.stats.allocator_calls;
  out["cache_hits"] = f.stats.cache_hits;
  out["decisions"] = f.decisions;
  std::printf("%s\n", out.dump(2).c_str());
}

void PrintTable(const BenchFlags& flags, const BenchState& bench, const CycleFigures& f,
                double bytes_per_job) {
  const sim::SyntheticOptions& options = flags.synthetic;
  const double pending = static_cast<double>(options.pending);
  std::printf("cluster        %d hosts, %lld slots (%lld free), %zu queues, policy %s\n",
              options.hosts, static_cast<long long>(bench.state.topology().total_slots()),
              static_cast<long long>(bench.state.topology().free_slots()),
              bench.state.topology().queues().size(), flags.policy.c_str());
  std::printf("pending        %lld jobs of %zu shapes (%lld unschedulable), built in %.2f s\n",
              static_cast<long long>(options.pending), bench.shapes.size(),
              static_cast<long long>(f.unschedulable), bench.build_seconds);
  std::printf("first cycle    %.3f s (classifies every job)\n", f.first_seconds);
  std::printf("cycle          %.3f s median of %zu, %.3f s CPU (explain %s)\n", f.cycle,
              f.times.size(), f.cycle_cpu, flags.explain ? "on" : "off");
  std::printf("evaluations/s  %.0f pending jobs per second\n", f.cycle > 0 ? pending / f.cycle : 0);
  std::printf("starts         %lld (%.0f per second)\n", static_cast<long long>(f.stats.started),
              f.cycle > 0 ? static_cast<double>(f.stats.started) / f.cycle : 0);
  std::printf("attempts       %lld (allocator %lld, cache %lld), %lld decisions\n",
              static_cast<long long>(f.stats.evaluated),
              static_cast<long long>(f.stats.allocator_calls),
              static_cast<long long>(f.stats.cache_hits), static_cast<long long>(f.decisions));
  std::printf("memory         %.0f bytes per pending job, peak RSS %.0f MB\n", bytes_per_job,
              PeakRssMb());
}

int RunBench(BenchFlags flags) {
  auto policy = core::ParsePolicyKind(flags.policy);
  if (!policy) {
    std::fprintf(stderr,
                 "sluice bench: --policy: expected fifo, bounded_backfill or easy_backfill, got "
                 "'%s'\n",
                 flags.policy.c_str());
    return 2;
  }
  flags.synthetic.policy = *policy;
  std::optional<BenchState> bench = BuildBenchState(flags);
  if (!bench) return 1;
  if (flags.estimate) {
    return RunEstimateBench(std::move(bench->state), 10, flags.cycles, flags.json,
                            flags.coarse_fraction);
  }
  const CycleFigures figures = TimeCycles(bench->state, flags);
  const int64_t pending = flags.synthetic.pending;
  const double bytes_per_job =
      pending > 0 ? static_cast<double>(bench->pending_bytes) / static_cast<double>(pending) : 0;
  if (flags.json) {
    PrintJson(flags, *bench, figures, bytes_per_job);
  } else {
    PrintTable(flags, *bench, figures, bytes_per_job);
  }
  return 0;
}

}  // namespace

void RegisterBenchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* bench =
      app.add_subcommand("bench", "time full scheduling cycles on a synthetic cluster");
  sim::SyntheticOptions& s = flags->synthetic;
  bench->add_option("--hosts", s.hosts, "hosts")->check(CLI::PositiveNumber);
  bench->add_option("--pending", s.pending, "pending jobs")->check(CLI::NonNegativeNumber);
  bench->add_option("--shapes", s.shapes, "distinct request shapes")->check(CLI::PositiveNumber);
  bench->add_option("--queues", s.queues, "queues")->check(CLI::PositiveNumber);
  bench->add_option("--users", s.users, "users")->check(CLI::PositiveNumber);
  bench
      ->add_option("--running", s.running,
                   "running jobs filling the cluster (default: one per host)")
      ->check(CLI::PositiveNumber);
  bench->add_option("--free", s.free_slots, "slots left free (default 0: the cluster is full)")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--seed", s.seed, "random seed");
  bench->add_option("--policy", flags->policy,
                    "admission policy of every queue: fifo | bounded_backfill | easy_backfill");
  bench->add_option("--cycles", flags->cycles, "timed cycles (the median is reported)")
      ->check(CLI::PositiveNumber);
  bench->add_flag("--explain", flags->explain, "explain every pending job (as the server does)");
  bench->add_flag("--json", flags->json, "print JSON instead of a table");
  bench->add_flag("--estimate", flags->estimate,
                  "time refreshes of the estimated starts (--cycles of them) instead of cycles");
  bench->add_option("--coarse-fraction", flags->coarse_fraction,
                    "with --estimate: the forecast's step beyond its first hour, as a fraction "
                    "of the distance (0: exact)");
  bench->add_option("--array", flags->array,
                    "submit one 1-slot job array (e.g. 1-1000000%1000) as the pending jobs");
  bench->callback([flags, &exit_code] { exit_code = RunBench(*flags); });
}

}  // namespace sluice::cli
