// Decisions out of a scheduling cycle (R-ARCH-1) and the cycle's result.
//
// A cycle emits its decisions in the order it made them (queues in cycle order, jobs in
// queue order), seven kinds:
//   StartJob         a job starts on an allocation (backfilled: ahead of a blocked head);
//   FailJob          a job that can never run ends EXIT with a cause and a message;
//   PendJob          a job left pending, with its reasons — only when the caller asks for
//                    explanations (CycleOptions::explain), one per pending job;
//   UpdateAdmission  a pending head's admission record changed (first blocked, bypassed,
//                    gate activated; R-ADM-2, R-ADM-3);
//   PreemptJob       a running job is to be stopped so that another can start (R-CAP-3,
//                    R-CAP-4);
//   DropPreemption   a preemption in progress is over: its hosts are no longer kept;
//   UpdateReclaim    a capacity queue's reclaim deadline is set or cleared (R-CAP-3).
// Commit() (core/cycle/scheduler.h) applies them to the state; drivers then act on each
// through a DecisionHandler (core/driver/drive_loop.h). docs/design/decisions-format.md
// describes the format drivers write. They are model/'s, beside the state they change, because
// the admission policies emit them too (through AdmissionContext) and admission/ sits below
// cycle/. Plain values: no invariants beyond the fields' comments; no thread-safety concerns.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/ids.h"
#include "base/time.h"
#include "core/model/cluster_state.h"
#include "core/model/job.h"
#include "core/reasons/reason.h"

namespace sluice::core {

struct StartJob {
  JobId job = kNoJob;
  Allocation allocation;
  bool backfilled = false;  // started ahead of a blocked head
};

struct FailJob {
  JobId job = kNoJob;
  ExitCause cause = ExitCause::kUnschedulable;
  std::string message;
};

struct PendJob {
  JobId job = kNoJob;
  PendingReasons reasons;
};

// The new head fields of a pending job's admission record (R-ADM-2, R-ADM-3): emitted when a
// head is first blocked, bypassed, or its gate activates. The server commits a bypass
// increment in one transaction with the StartJob of the job that caused it.
struct UpdateAdmission {
  JobId job = kNoJob;
  int32_t bypass_count = 0;
  std::optional<Instant> first_blocked;
  std::optional<Instant> gate_since;
};

// Preemption (R-CAP-3, R-CAP-4): `victim` is to be stopped — SIGTERM now, SIGKILL at
// `kill_at` — so that `for_job` can start; the driver applies JobRequeued for the victim
// once it has exited. Until `for_job` starts, the victims' hosts are kept for it.
struct PreemptJob {
  JobId victim = kNoJob;
  JobId for_job = kNoJob;
  Instant kill_at = 0;
};

// A preemption whose job started, left its queue, or can no longer use what was freed: its
// hosts are no longer kept.
struct DropPreemption {
  JobId for_job = kNoJob;
};

// A queue's reclaim deadline (R-CAP-3): set when it first falls below its guarantee with
// runnable pending work, cleared (nullopt) when it no longer does. The store persists it.
struct UpdateReclaim {
  QueueIndex queue = 0;
  std::optional<Instant> deadline;
};

using Decision = std::variant<StartJob, FailJob, PendJob, UpdateAdmission, PreemptJob,
                              DropPreemption, UpdateReclaim>;

struct CycleStats {
  int64_t evaluated = 0;        // allocation attempts (Nominate calls)
  int64_t allocator_calls = 0;  // attempts that reached the allocator
  int64_t cache_hits = 0;       // attempts answered by the unsatisfiable cache (R-AL-5)
  int64_t started = 0;
  int64_t backfilled = 0;
  int64_t failed = 0;
  int64_t preempted = 0;  // victims chosen
};

struct CycleResult {
  std::vector<Decision> decisions;
  // Unavailable allocation attempts per queue (by QueueIndex); the admitted, backfilled and
  // unschedulable counts are in the decisions.
  std::vector<int64_t> unavailable_by_queue;
  std::optional<Instant> wake_at;  // the next time the core needs a cycle without an event
  CycleStats stats;
};

}  // namespace sluice::core
