// Simulator: replays a Workload through the real scheduling core on a virtual clock
// (R-SIM-1, R-SIM-1b, R-SIM-1d).
//
// Timing: at each timestamp the simulator applies finishes (by job id), then cancels (by
// job id), then submissions (by job id), then releases of held jobs (JSONL `release_at`, by
// job id; a release at or before the submission applies right after it), and then runs one
// cycle. A submission the core refuses because its queue is closed (or because it depends on
// such a job) is not an error: the job is recorded as rejected with a warning. Events a
// cycle creates at the current time (a zero-runtime job's finish) are applied after it and
// another cycle runs at the same time. It also wakes at every timer the core asks for. A job
// started by the cycle at time t has start time t and finishes at t + runtime (or, with
// kill_at_limit, at t + run_limit when it would overrun). Deterministic: no wall clock, no
// hash-order iteration; same inputs, same records and decision lines.
//
// Run is the core's DriveLoop (core/driver/drive_loop.h) with the workload as its inputs:
// the run's bookkeeping (simulator.cc) applies the inputs due at each time and is the loop's
// DecisionHandler (records, DecisionSink calls, finishes to come).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/cycle/scheduler.h"
#include "core/model/cluster_state.h"
#include "sim/gpu_usage.h"
#include "sim/workload.h"

namespace sluice::sim {

// What happened to one job, for metrics.
struct JobRecord {
  JobId id = kNoJob;
  std::string user;
  std::string queue;
  int32_t slots = 0;  // granted (or min_tasks when never started)
  Instant submit = 0;
  Instant start = -1;  // -1: never started
  Instant end = -1;    // -1: never ended
  core::JobState state = core::JobState::kPending;
  core::ExitCause cause = core::ExitCause::kNone;
  bool rejected = false;              // its submission was refused (closed queue, or it depends on
                                      // a rejected job); it never entered the cluster
  bool blocked_head = false;          // was ever its queue's head and temporarily unavailable
  std::optional<Instant> gate_since;  // when its aging gate activated, if it did
  int32_t preemptions = 0;            // times it was preempted and requeued (R-CAP-3, R-CAP-4)
  double work_lost = 0;               // slot-seconds of the runs preemption cut short
  bool is_array = false;              // a job array's submission: each element has its own record
};

// Receives every decision and applied event as it happens (the --decisions file).
class DecisionSink {
 public:
  virtual ~DecisionSink() = default;
  virtual void OnStart(Instant t, const core::Job& job, const core::ClusterState& state) = 0;
  virtual void OnFinish(Instant t, const core::Job& job) = 0;
  virtual void OnExit(Instant t, JobId job, core::ExitCause cause, const std::string& message) = 0;
  virtual void OnCancel(Instant t, JobId job) = 0;
  // A running job preempted (and requeued) so that `for_job` can start.
  virtual void OnPreempt(Instant /*t*/, JobId /*job*/, JobId /*for_job*/) {}
};

struct SimOptions {
  bool kill_at_limit = false;
  // Stop after the last cycle at or before this time and keep that cycle's explanations.
  std::optional<Instant> pending_at;
  // Explain every cycle (tests: "every pending job has a reason").
  bool explain_every_cycle = false;
  // Called after every committed cycle (property tests check invariants here).
  std::function<void(const core::ClusterState&, Instant, const core::CycleResult&)> after_cycle;
  // Called with the fraction of submissions applied so far (progress bar).
  std::function<void(double)> progress;
};

struct SimResult {
  std::vector<JobRecord> records;  // in workload order
  int64_t cycles = 0;
  int64_t evaluations = 0;
  // With pending_at: the reasons of the last cycle at or before it, in cycle order.
  std::vector<core::PendJob> pending;
  Instant pending_time = 0;           // the time of that cycle
  int64_t rejected = 0;               // submissions the core refused (JobRecord::rejected)
  std::vector<std::string> warnings;  // one line per rejected submission
  GpuTotals gpus;                     // device-seconds held and stranded (sim/gpu_usage.h)
};

class Simulator {
 public:
  // `state` is the cluster before any job arrives; `workload` is borrowed for Run().
  Simulator(core::ClusterState state, const Workload& workload, SimOptions options);

  // Runs to the end (or to pending_at). Errors: a workload job the core refuses (unknown
  // queue, duplicate id), named by its source line.
  Result<SimResult> Run(DecisionSink* sink);

  // The state as the run left it (for rendering pending reports).
  const core::ClusterState& state() const { return state_; }

 private:
  core::ClusterState state_;
  const Workload& workload_;
  SimOptions options_;
  core::Scheduler scheduler_;
};

}  // namespace sluice::sim
