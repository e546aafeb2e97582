// Estimated start times of pending jobs (issue 6, R-PR-2, R-UX-8): the scheduling core run forward
// from the current state, with every job's run limit as its runtime and no new arrivals.
//
// It lives in the core so that every driver runs the same forecast: `sluice sim
// --pending-at` (sim/pending_report.h) and the controller's background estimates
// (server/estimates.h, R-UX-8).
// Method: a private Clone() of the state is driven by the core's DriveLoop
// (core/driver/drive_loop.h), as the simulator drives it (R-SIM-1b, R-SIM-1d): at each time,
// the finishes due then (by job id), then one cycle, committed and handed to the forecast's
// DecisionHandler; it wakes at finishes and at every timer the core asks for, and preemption
// victims go back to their queues at once.
// No scheduling code of its own: what the core would decide is what the estimate says.
// A running job ends at start + run_limit, or at `now` if it has already overrun its limit;
// in a predictive_backfill queue at its predicted end instead (ExpectedEndForForecast,
// core/admission/runtime_prediction.h), and the estimates then say so (`predicted`); inside an
// advance reservation at the latest when its window ends + the overrun, as the drivers end it.
// Any other job without a run limit never ends in the forecast, so a job that does not start in the
// forecast waits behind such a job (or is held, or its queue is inactive, ...) and its
// estimate is "unknown", with why. A job that does start in the forecast gets that time:
// exact when run limits equal runtimes and no job arrives (tests/sim/estimate_test.cc).
// Cost: one cycle per distinct finish or timer time, bounded by EstimateOptions (max_cycles,
// and coarse steps beyond the exact window: the controller's refreshes use them, R-UX-8).
// Thread-safety: reads `state` only; the forecast runs on its own copy.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/time.h"
#include "core/model/cluster_state.h"
#include "core/reasons/reason.h"

namespace sluice::core {

// The estimate of one job; its text and JSON are in wire/estimate_json.h.
struct StartEstimate {
  std::optional<Instant> start;  // nullopt: unknown
  // The start comes from a forecast in which some job ran its predicted runtime rather than
  // its run limit (a predictive_backfill queue, core/admission/runtime_prediction.h).
  bool predicted = false;
  std::string unknown_because;  // when unknown: why, in plain words
  // When unknown: the main reason the job still pends at the end of the forecast.
  std::optional<core::ReasonCode> reason_at_end;
  // When unknown: running jobs without a run limit at the end, the first kWaitsForListed of
  // them, and how many there are in all.
  std::vector<JobId> waits_for;
  int64_t waits_for_count = 0;
};

// Why the list is capped: every pending job's estimate carried all of them, O(pending x
// running) ids; 40,000 pending behind 160,000 running jobs without a run limit ran the
// controller out of memory (scripts/e2e-scale, issue 21).
inline constexpr size_t kWaitsForListed = 20;

struct EstimateOptions {
  // The forecast stops after this many cycles (timers that recur forever, e.g. windows).
  int64_t max_cycles = 20000;
  // Run a cycle at `now` first: for a state changed since its last cycle (the controller's,
  // whose submissions, finishes and changes arrive between cycles).
  bool cycle_at_now = false;
  // Exact (one cycle at every finish and timer) up to `exact_window` after `now`; beyond it,
  // when coarse_fraction > 0, one cycle per step of coarse_fraction x (t - now): finishes
  // and timers within a step take effect at its end, so far estimates err late by at most
  // about that fraction. 0: exact throughout (the simulator's --pending-at).
  Duration exact_window = 3600;
  double coarse_fraction = 0;
};

// Estimates for every PENDING or HELD job of `state`, by job id. `now` is the time of the
// last cycle committed to `state`; `wake_at` the earliest timer that cycle (or an earlier
// one) asked for and that has not fired yet.
std::map<JobId, StartEstimate> EstimateStarts(const core::ClusterState& state, Instant now,
                                              std::optional<Instant> wake_at,
                                              const EstimateOptions& options = {});
// The same on `copy`, a Clone() the caller made (e.g. under a lock it then released); the
// forecast runs on it and consumes it.
std::map<JobId, StartEstimate> EstimateStartsOn(core::ClusterState copy, Instant now,
                                                std::optional<Instant> wake_at,
                                                const EstimateOptions& options = {});

}  // namespace sluice::core
