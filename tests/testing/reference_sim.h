// Reference simulator: an independent, deliberately naive model of `sluice sim` on SWF traces,
// written from SPEC.md alone so that golden tests can cross-check the real simulator.
//
// Implements R-SIM-1b, R-SIM-1c, R-SIM-1d, R-SIM-1e and the metrics of R-SIM-2, for the
// `fifo` and `easy_backfill` policies of R-ADM-2 on a machine of P interchangeable processors
// (the default SWF cluster: P hosts of one slot each). It shares no code with src/core or
// src/sim; keep it that way, or the cross-check proves nothing.
//
// NOTE: its event loop is a fourth copy of the drive loop on purpose. The simulator, the
// start-time estimator and the controller share core::DriveLoop (core/driver/drive_loop.h);
// this file must not: as the differential test's oracle it has to stay an independent loop,
// so that a bug in the shared driver shows up as a difference instead of being reproduced.
//
// Representation: a workload is the list of jobs that passed the SWF filters, in submission
// order (stably sorted by submit time, ties in file order); that order is also the queue order.
// Simulation keeps a free-processor count, the running jobs and the pending queue, and steps
// from one event timestamp to the next. Times are whole seconds (base/time.h).
// Invariants: 0 <= free <= P; every job starts exactly once; a job's processors are returned
// exactly `runtime` seconds after it starts (jobs are never killed at their estimate).
// Clarity beats speed: every cycle rescans the queue and re-sorts the running jobs, which is
// fine for the few thousand jobs a golden test replays.
// Thread-safety: plain functions over value types; no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/time.h"

namespace sluice::reference_sim {

// One SWF job after the R-SIM-1c field rules.
struct Job {
  int64_t id = 0;         // field 1
  Instant submit = 0;     // field 2
  Duration runtime = 0;   // field 4: how long it really runs
  int64_t procs = 0;      // field 8 if > 0, else field 5
  Duration estimate = 0;  // field 9 if > 0, else the runtime
};

struct Workload {
  int64_t procs = 0;      // machine size P
  std::vector<Job> jobs;  // submission order
  int64_t skipped = 0;    // data lines dropped by the R-SIM-1c filters (whole file)
};

struct SwfOptions {
  int64_t procs = 0;      // `--procs`; 0 means "from the header"
  int64_t max_jobs = -1;  // `--max-jobs`; < 0 means all
};

// Parses SWF text per R-SIM-1c.
// Outcomes: the workload; or InvalidArgument when no machine size is known (no `procs`
// option and neither a positive `MaxProcs` nor `MaxNodes` header).
Result<Workload> ParseSwf(std::string_view text, const SwfOptions& options);

// Reads `path` (plain or gzip-compressed) and parses it with ParseSwf.
// Outcomes: as ParseSwf; NotFound when the file cannot be opened.
Result<Workload> LoadSwf(const std::string& path, const SwfOptions& options);

enum class Policy { kFcfs, kEasy };

// The R-SIM-1c / R-SIM-2 metrics, over every job of the workload.
struct Metrics {
  int64_t jobs = 0;
  int64_t skipped = 0;
  double avg_wait = 0;
  double max_wait = 0;
  double avg_bsld = 0;     // bounded slowdown, threshold 10 s
  double utilization = 0;  // fraction of P x makespan
  double makespan = 0;     // last end - first submit
};

struct RunningJob {
  int64_t id = 0;
  int64_t procs = 0;
  Instant start = 0;
  Instant expected_end = 0;  // max(start + estimate, now) at the cycle's time
};

// What one scheduling cycle saw and did; for explaining a disagreement.
struct CycleTrace {
  Instant now = 0;
  int64_t free_before = 0;                 // free processors when the cycle began
  std::vector<int64_t> queue_before;       // pending job ids, queue order
  std::vector<RunningJob> running_before;  // sorted by (expected end, start order)
  bool shadow_computed = false;            // EASY only: the head did not fit
  int64_t head = -1;                       // the blocked head's id when shadow_computed
  Instant shadow = 0;                      // S
  int64_t extra = 0;                       // surplus processors at S, as first computed
  std::vector<int64_t> started;            // ids started by this cycle, in order
};

struct SimOptions {
  // Called after every cycle; may be empty.
  std::function<void(const CycleTrace&)> on_cycle;
};

struct Outcome {
  std::vector<Instant> start;  // start[i] belongs to workload.jobs[i]
  Metrics metrics;
};

// Replays `workload` on P processors under `policy`.
// REQUIRES: every job has 0 < procs <= workload.procs, runtime >= 0, estimate >= 0, and the
// jobs are sorted by submit time.
Outcome Simulate(const Workload& workload, Policy policy, const SimOptions& options = {});

// Metrics of `workload` given each job's start time (exposed for tests).
Metrics ComputeMetrics(const Workload& workload, const std::vector<Instant>& start);

}  // namespace sluice::reference_sim
