// `sluice sim`: replays a workload through the core (R-SIM-1 … R-SIM-4).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "config/cluster_yaml.h"
#include "core/cycle/scheduler.h"
#include "core/driver/forecast.h"
#include "sim/decision_log.h"
#include "sim/gpu_usage.h"
#include "sim/jsonl_reader.h"
#include "sim/metrics.h"
#include "sim/pending_report.h"
#include "sim/plot.h"
#include "sim/simulator.h"
#include "sim/swf_reader.h"

namespace sluice::cli {
namespace {

struct SimFlags {
  std::string trace;
  std::string workload;
  std::string config;
  int32_t hosts = 0;
  int32_t slots = 1;
  int32_t procs = 0;
  int64_t max_jobs = -1;
  std::string policy;
  std::optional<int32_t> max_bypass;
  std::optional<int64_t> max_head_wait;
  std::optional<int32_t> history_runs;  // predictive_backfill knobs (predictive_config.h)
  std::string backfill_order;
  std::string history_match;
  std::optional<int32_t> age_limits;
  std::optional<int64_t> reserve_after;
  std::optional<int64_t> age_after;
  std::optional<int32_t> reserve_depth;
  std::optional<int32_t> reserve_top;
  std::optional<bool> predicted_guard;
  bool json = false;
  std::string decisions;
  std::optional<Instant> pending_at;
  bool pending_detail = false;
  bool pending_summary = false;
  bool no_estimate = false;
  bool kill_at_limit = false;
  bool no_progress = false;
  std::string plot;
  bool oracle_runtimes = false;  // study only: predictions are the true runtimes
};

Result<sim::Workload> LoadWorkload(const SimFlags& flags) {
  if (!flags.trace.empty()) {
    return sim::ReadSwf(flags.trace,
                        sim::SwfOptions{.procs = flags.procs, .max_jobs = flags.max_jobs});
  }
  return sim::ReadJsonl(flags.workload, sim::JsonlOptions{.max_jobs = flags.max_jobs});
}

Status ApplyPredictiveFlags(const SimFlags& flags, core::PredictiveKnobs& knobs) {
  if (flags.history_runs) knobs.history_runs = *flags.history_runs;
  if (flags.reserve_after) knobs.reserve_after = *flags.reserve_after;
  if (flags.age_after) knobs.age_after = *flags.age_after;
  if (flags.reserve_depth) knobs.reserve_depth = *flags.reserve_depth;
  if (flags.reserve_top) knobs.reserve_top = *flags.reserve_top;
  if (flags.predicted_guard) knobs.predicted_guard = *flags.predicted_guard;
  if (flags.age_limits) knobs.age_limits = *flags.age_limits;
  if (!flags.history_match.empty()) {
    auto match = core::ParseHistoryMatch(flags.history_match);
    if (!match) {
      return InvalidArgument("--history-match: expected user or user_limit, got '" +
                             flags.history_match + "'");
    }
    knobs.history_match = *match;
  }
  if (flags.backfill_order.empty()) return Status::Ok();
  auto order = core::ParseBackfillOrder(flags.backfill_order);
  if (!order) {
    return InvalidArgument("--backfill-order: expected queue, shortest or expansion, got '" +
                           flags.backfill_order + "'");
  }
  knobs.order = *order;
  return Status::Ok();
}

Result<core::ClusterConfig> BuildCluster(const SimFlags& flags, const sim::Workload& workload) {
  core::ClusterConfig config;
  if (!flags.config.empty()) {
    Result<core::ClusterConfig> loaded = config::LoadClusterConfig(flags.config);
    if (!loaded) return loaded.error();
    config = std::move(*loaded);
  } else if (flags.hosts > 0) {
    config = core::UniformCluster(flags.hosts, flags.slots);
  } else if (!flags.trace.empty()) {
    config = core::UniformCluster(workload.procs, 1);  // R-SIM-1c: P hosts of 1 slot
  } else {
    return InvalidArgument(
        "a workload needs a cluster: give --config FILE or --hosts H [--slots S]");
  }
  for (core::QueueSpec& queue : config.queues) {
    if (!flags.policy.empty()) {
      auto policy = core::ParsePolicyKind(flags.policy);
      if (!policy) {
        return InvalidArgument(
            "--policy: expected fifo, bounded_backfill, easy_backfill or predictive_backfill, got "
            "'" +
            flags.policy + "'");
      }
      queue.policy = *policy;
    }
    if (flags.max_bypass) queue.max_bypass = *flags.max_bypass;
    if (flags.max_head_wait) queue.max_head_wait = *flags.max_head_wait;
    SLUICE_RETURN_IF_ERROR(ApplyPredictiveFlags(flags, queue.predictive));
  }
  // Dispatch windows are wall-clock rules: time 0 is the trace's UnixStartTime, else
  // 1970-01-01T00:00Z (R-SIM-1).
  config.epoch_offset = workload.unix_start_time;
  return config;
}

std::string Title(const SimFlags& flags, const core::ClusterState& state) {
  std::string policies;
  for (const core::Queue& queue : state.topology().queues()) {
    if (!policies.empty()) policies += ",";
    policies += std::string(core::ToString(queue.spec.policy));
  }
  return fmt::format("sluice sim: {} on {} slots ({} hosts), policy {}",
                     flags.trace.empty() ? flags.workload : flags.trace,
                     state.topology().total_slots(), state.topology().hosts().size(), policies);
}

// What a run leaves behind: with a full trace, 200,000 jobs in the workload, the state's job
// table and the records.
struct Leftovers {
  std::unique_ptr<sim::Simulator> simulator;
  sim::Workload workload;
  sim::SimResult result;
};

// Freeing the leftovers node by node took ~5% of a full trace's replay, and the process exits
// right after the command, which returns the memory at once: they are deliberately never
// freed. A static pointer keeps them reachable, so leak checkers do not report them.
void KeepUntilExit(Leftovers leftovers) {
  static Leftovers* const kept = new Leftovers(std::move(leftovers));  // one run per process
  (void)kept;
}

void DrawProgress(double fraction) {
  const int width = 40;
  const int filled = static_cast<int>(fraction * width);
  std::fprintf(stderr, "\r[%s%s] %3d%%", std::string(filled, '#').c_str(),
               std::string(width - filled, ' ').c_str(), static_cast<int>(fraction * 100));
  if (fraction >= 1.0) std::fprintf(stderr, "\r%*s\r", width + 8, "");
  std::fflush(stderr);
}

// --pending-at T: the jobs with reasons, hints and estimated starts, or the summary.
std::string PendingReport(const SimFlags& flags, const sim::SimResult& result,
                          const core::ClusterState& state, std::optional<Instant> wake) {
  const Instant at = result.pending_time;
  if (flags.pending_summary) {
    return flags.json ? sim::PendingSummaryJson(result.pending, state)
                      : sim::PendingSummaryText(result.pending, state, at);
  }
  std::map<JobId, core::StartEstimate> estimates;
  sim::PendingReportOptions options{.per_host = flags.pending_detail, .estimates = nullptr};
  if (!flags.no_estimate) {
    estimates = core::EstimateStarts(state, at, wake);
    options.estimates = &estimates;
  }
  return flags.json ? sim::PendingReportJsonLines(result.pending, state, options)
                    : sim::PendingReportText(result.pending, state, at, options);
}

// The cluster of the run with its queues (a trace's q<N> queues mapped), and, with
// --oracle-runtimes, the true-runtime table of the study.
Result<core::ClusterState> BuildState(const SimFlags& flags, sim::Workload& workload) {
  Result<core::ClusterConfig> config = BuildCluster(flags, workload);
  if (!config) return config.error();
  if (!flags.trace.empty()) sim::MapSwfQueues(*config, workload);  // q<N> queues, if named
  Result<core::ClusterState> state = core::ClusterState::Create(*config);
  if (!state) return state.error();
  if (flags.oracle_runtimes) {
    // Study only (docs/studies/admission.md): perfect predictions, to bound what the order
    // of backfill candidates can gain. No server or YAML setting can do this.
    for (const sim::WorkloadJob& job : workload.jobs) {
      state->runtime_history_for_study().SetTrueRuntime(job.spec.id, job.runtime);
    }
  }
  return state;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "w"), &std::fclose);
  return file && std::fwrite(text.data(), 1, text.size(), file.get()) == text.size();
}

int RunSim(const SimFlags& flags) {
  if (flags.trace.empty() == flags.workload.empty()) {
    std::fprintf(stderr, "sluice sim: give exactly one of --trace FILE or --workload FILE\n");
    return 2;
  }
  Result<sim::Workload> workload = LoadWorkload(flags);
  if (!workload) {
    std::fprintf(stderr, "sluice sim: %s\n", workload.error().message().c_str());
    return 2;
  }
  Result<core::ClusterState> state = BuildState(flags, *workload);
  if (!state) {
    std::fprintf(stderr, "sluice sim: %s\n", state.error().message().c_str());
    return 2;
  }
  const std::string title = Title(flags, *state);

  std::unique_ptr<std::FILE, int (*)(std::FILE*)> decisions_file(nullptr, &std::fclose);
  std::unique_ptr<sim::DecisionLog> log;
  if (!flags.decisions.empty()) {
    decisions_file.reset(std::fopen(flags.decisions.c_str(), "w"));
    if (!decisions_file) {
      std::fprintf(stderr, "sluice sim: --decisions: cannot write '%s'\n", flags.decisions.c_str());
      return 2;
    }
    log = std::make_unique<sim::DecisionLog>(decisions_file.get());
  }

  sim::SimOptions options{.kill_at_limit = flags.kill_at_limit, .pending_at = flags.pending_at};
  if (!flags.no_progress && isatty(STDERR_FILENO)) options.progress = DrawProgress;
  sim::PlotSeries plot;
  // The simulator's pending timer as of the last cycle (its rule: reset when reached, then
  // the earliest later wake_at), for the estimated starts of --pending-at.
  std::optional<Instant> wake;
  const int64_t total_gpus = sim::TotalGpus(state->topology());  // the GPU chart's scale
  options.after_cycle = [&plot, &wake, &flags, total_gpus](const core::ClusterState& s, Instant t,
                                                           const core::CycleResult& cycle) {
    if (wake && *wake <= t) wake.reset();
    if (cycle.wake_at && *cycle.wake_at > t)
      wake = std::min(wake.value_or(kInfinite), *cycle.wake_at);
    if (flags.plot.empty()) return;
    int64_t pending = 0;
    for (const core::Queue& queue : s.topology().queues())
      pending += static_cast<int64_t>(queue.pending.size());
    int64_t used = 0;
    for (const core::Queue& queue : s.topology().queues()) used += queue.used_slots;
    sim::PlotSample sample{.t = t, .used_slots = used, .pending_jobs = pending};
    if (total_gpus > 0) sim::SampleGpus(s.topology(), sample);
    plot.Add(sample);
  };
  auto simulator =
      std::make_unique<sim::Simulator>(std::move(*state), *workload, std::move(options));
  Result<sim::SimResult> result = simulator->Run(log.get());
  if (log) log->Flush();
  if (!result) {
    std::fprintf(stderr, "sluice sim: %s\n", result.error().message().c_str());
    return 2;
  }
  for (const std::string& warning : result->warnings) {
    std::fprintf(stderr, "sluice sim: warning: %s\n", warning.c_str());
  }
  if (!flags.plot.empty() &&
      !WriteFile(flags.plot,
                 plot.Svg(title, simulator->state().topology().total_slots(), total_gpus))) {
    std::fprintf(stderr, "sluice sim: --plot: cannot write '%s'\n", flags.plot.c_str());
    return 1;
  }
  std::string out;
  if (flags.pending_at) {
    out = PendingReport(flags, *result, simulator->state(), wake);
  } else {
    sim::Metrics metrics = sim::ComputeMetrics(*result, simulator->state().topology().total_slots(),
                                               workload->skipped);
    out = flags.json ? sim::MetricsToJson(metrics) : sim::MetricsToTable(metrics, title);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  KeepUntilExit(Leftovers{std::move(simulator), std::move(*workload), std::move(*result)});
  return 0;
}

}  // namespace

void RegisterSimCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SimFlags>();
  CLI::App* sim = app.add_subcommand(
      "sim", "replay a workload (SWF trace or Sluice JSONL) through the scheduler");
  sim->add_option("--trace", flags->trace, "SWF trace (.swf or .swf.gz)");
  sim->add_option("--workload", flags->workload, "Sluice workload (JSON lines)");
  sim->add_option("--config", flags->config, "cluster YAML");
  sim->add_option("--hosts", flags->hosts, "uniform cluster: number of hosts")
      ->check(CLI::PositiveNumber);
  sim->add_option("--slots", flags->slots, "uniform cluster: slots per host")
      ->check(CLI::PositiveNumber);
  sim->add_option("--procs", flags->procs, "SWF machine size P (default: trace header)")
      ->check(CLI::PositiveNumber);
  sim->add_option("--max-jobs", flags->max_jobs,
                  "replay only the first N jobs that pass the loading rules")
      ->check(CLI::PositiveNumber);
  sim->add_option("--policy", flags->policy,
                  "admission policy of every queue: fifo | bounded_backfill | easy_backfill | "
                  "predictive_backfill");
  sim->add_option("--max-bypass", flags->max_bypass,
                  "bounded_backfill: bypasses before the head's gate closes")
      ->check(CLI::NonNegativeNumber);
  sim->add_option("--max-head-wait", flags->max_head_wait,
                  "bounded_backfill: seconds before the head's gate closes")
      ->check(CLI::NonNegativeNumber);
  sim->add_option("--history-runs", flags->history_runs,
                  "predictive_backfill: runtimes of the user's last N jobs averaged to predict")
      ->check(CLI::Range(1, 8));
  sim->add_option(
      "--backfill-order", flags->backfill_order,
      "predictive_backfill: candidate order: queue | shortest | expansion (default: expansion)");
  sim->add_option("--age-after", flags->age_after,
                  "predictive_backfill: seconds of wait after which a candidate is tried first, in "
                  "queue order (0: never)")
      ->check(CLI::NonNegativeNumber);
  sim->add_option("--reserve-after", flags->reserve_after,
                  "predictive_backfill: seconds of wait after which a job gets its own reservation "
                  "(0: never)")
      ->check(CLI::NonNegativeNumber);
  sim->add_option(
         "--reserve-depth", flags->reserve_depth,
         "predictive_backfill: at most this many waiting jobs get reservations besides the head")
      ->check(CLI::NonNegativeNumber);
  sim->add_option("--reserve-top", flags->reserve_top,
                  "predictive_backfill: the first N jobs of the queue (head included) get joint "
                  "reservations from run limits (1: the head only)")
      ->check(CLI::PositiveNumber);
  sim->add_option("--history-match", flags->history_match,
                  "predictive_backfill: the user's last jobs predicted from: user (all) | "
                  "user_limit (same run limit first; the default)");
  sim->add_option("--age-limits", flags->age_limits,
                  "predictive_backfill: a candidate that waited this many times its run limit is "
                  "tried first, in queue order (0: never)")
      ->check(CLI::NonNegativeNumber);
  sim->add_flag(
      "--oracle-runtimes", flags->oracle_runtimes,
      "study only: predictive_backfill predicts every job's true runtime (a bound, not a policy)");
  sim->add_option("--predicted-guard", flags->predicted_guard,
                  "predictive_backfill: also protect the head's reservation computed from "
                  "predictions (true | false)");
  sim->add_flag("--json", flags->json, "print JSON instead of a table");
  sim->add_option("--decisions", flags->decisions, "write every decision as JSON lines to FILE");
  sim->add_option("--pending-at", flags->pending_at,
                  "print the pending jobs and their reasons at simulated time T")
      ->check(CLI::NonNegativeNumber);
  sim->add_flag("--pending-detail", flags->pending_detail,
                "with --pending-at: what every host says about each job (like bjobs -p2)");
  sim->add_flag("--pending-summary", flags->pending_summary,
                "with --pending-at: only how many jobs wait for what, by reason and queue (like "
                "bjobs -psum)");
  sim->add_flag("--no-estimate", flags->no_estimate, "with --pending-at: no estimated start times");
  sim->add_flag("--kill-at-limit", flags->kill_at_limit, "kill jobs that reach their run limit");
  sim->add_flag("--no-progress", flags->no_progress, "no progress bar on stderr");
  sim->add_option("--plot", flags->plot,
                  "write utilization and queue length over time as an SVG image");
  sim->callback([flags, &exit_code] { exit_code = RunSim(*flags); });
}

}  // namespace sluice::cli
