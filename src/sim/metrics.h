// Metrics of a simulation (R-SIM-1c, R-SIM-2): waits, bounded slowdown, utilization,
// makespan, with per-queue and per-user breakdowns.
//
// Definitions: wait = start - submit; bounded slowdown = max(1, (wait + run) / max(run, 10));
// makespan = last end - first submit; utilization = sum(run x slots) / (slots x makespan),
// where run = end - start. Averages are over jobs that started. Percentiles use the
// nearest-rank method on the sorted waits.
//
// GPUs (issue 41), only on a cluster with some; G = its devices, held(t) = the devices jobs
// hold at time t, stranded(t) = the free devices of hosts some of whose devices are held
// (free, but not on a wholly free host), all integrated over the makespan:
//   gpu_seconds       = integral of held(t) dt (device-seconds; preempted runs included)
//   gpu_utilization   = gpu_seconds / (G x makespan)
//   gpu_fragmentation = integral of stranded(t) dt / (G x makespan - gpu_seconds)
// that is, the share of the free device-seconds that were stranded: each free device weighs
// by how long it was free, so a cluster that is full, or idle, or has only whole hosts free,
// adds none. 0 when no device was ever free. docs/workload-format.md has the same.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace sluice::sim {

struct WaitStats {
  int64_t jobs = 0;     // jobs submitted
  int64_t started = 0;  // jobs that started
  double avg_wait = 0;
  int64_t max_wait = 0;
  int64_t p50_wait = 0;
  int64_t p95_wait = 0;
  int64_t p99_wait = 0;
  double avg_bsld = 0;
};

struct Metrics {
  WaitStats all;
  int64_t skipped = 0;        // workload lines the loading rules dropped
  int64_t unschedulable = 0;  // jobs ended EXIT UNSCHEDULABLE
  int64_t cancelled = 0;
  int64_t rejected = 0;       // submissions refused (closed queue); not in the job counts
  int64_t never_started = 0;  // still pending when the run ended
  int64_t blocked_heads = 0;  // jobs that were ever a blocked queue head
  int64_t max_head_wait = 0;  // the longest wait of those jobs
  int64_t gated_heads = 0;    // jobs whose aging gate activated
  int64_t preemptions = 0;    // runs cut short by preemption (R-CAP-3, R-CAP-4)
  double work_lost = 0;       // slot-seconds of those runs
  double utilization = 0;
  int64_t makespan = 0;
  int64_t total_slots = 0;
  int64_t total_gpus = 0;  // 0: no GPU metrics (the four below stay 0 and are not printed)
  int64_t gpu_seconds = 0;
  double gpu_utilization = 0;
  double gpu_fragmentation = 0;
  int64_t cycles = 0;
  std::map<std::string, WaitStats> by_queue;
  // Per queue: its share of the machine (slot-seconds run / (slots x makespan), lost work
  // included), and preemptions its jobs suffered.
  std::map<std::string, double> utilization_by_queue;
  std::map<std::string, int64_t> preemptions_by_queue;
  std::map<std::string, WaitStats> by_user;
};

Metrics ComputeMetrics(const SimResult& result, int64_t total_slots, int64_t skipped);

// One JSON object (R-SIM-4 keys first, then the rest), newline-terminated.
std::string MetricsToJson(const Metrics& metrics);
// The human-readable table printed by default.
std::string MetricsToTable(const Metrics& metrics, const std::string& title);

}  // namespace sluice::sim
