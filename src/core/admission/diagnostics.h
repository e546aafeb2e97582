// Admission diagnostics (R-ADM-3, R-SRV-4): what the API shows about a job's place in the
// admission contract, and per-queue counters for metrics.
//
// Diagnose() is a pure read of the state: policy, enqueue sequence, pending age, the
// request as normalized text, the classification (R-ADM-1), the head counters and gate, and
// the eligible-capacity verdict (slots requested vs slots the queue's configured hosts that
// match the request have, in any state). Counters() combines what the state shows now
// (oldest pending age, gated heads) with the totals every committed cycle adds (attempts by
// outcome, backfilled admissions, unschedulable exits).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/cluster_state.h"

namespace sluice::core {

enum class Classification { kNew, kAdmitted, kTemporarilyUnavailable, kUnschedulable };
std::string_view ToString(Classification classification);

enum class GateState { kNone, kCounting, kActive };  // never blocked / blocked head / gated
std::string_view ToString(GateState gate);

struct AdmissionDiagnostics {
  PolicyKind policy = PolicyKind::kFifo;
  uint64_t sequence = 0;
  Duration pending_age = 0;  // now - enqueue time, for a job still waiting
  std::string request;       // "4 tasks: select[type==linux] rusage[mem=2000]"
  Classification classification = Classification::kNew;
  int32_t bypass_count = 0;
  int32_t max_bypass = 0;
  std::optional<Instant> first_blocked;
  Duration max_head_wait = 0;
  GateState gate = GateState::kNone;
  std::optional<Instant> gate_since;
  int64_t requested_slots = 0;  // the fewest slots the request can run with
  int64_t eligible_slots = 0;   // configured slots of the queue's hosts matching the request
};

AdmissionDiagnostics Diagnose(const Job& job, const ClusterState& state, Instant now);

struct QueueCounters {
  std::string queue;
  Duration oldest_pending_age = 0;
  int32_t gated_heads = 0;
  AdmissionTotals totals;
};

// One entry per queue, in queue index order.
std::vector<QueueCounters> Counters(const ClusterState& state, Instant now);

}  // namespace sluice::core
