// Bookkeeping types shared by the controller's source files (controller.cc, *_api.cc).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/job.h"
#include "core/reasons/reason.h"
#include "server/controller.h"
#include "store/store.h"

namespace sluice::server {

// Phases of the stored admission record (seed 000): PENDING, ADMITTING, ADMITTED, ENDED.
inline constexpr const char* kPhasePending = "PENDING";
inline constexpr const char* kPhaseAdmitting = "ADMITTING";
inline constexpr const char* kPhaseAdmitted = "ADMITTED";
inline constexpr const char* kPhaseEnded = "ENDED";

// Keys of the store's settings: "<kind>/<queue or host name>".
inline constexpr const char* kSettingQueueOpen = "queue_open";      // 0 or 1
inline constexpr const char* kSettingQueueActive = "queue_active";  // 0 or 1
inline constexpr const char* kSettingHostClosed = "host_closed";    // 1; absent when open
inline constexpr const char* kSettingReclaimDeadline = "reclaim_deadline";  // an Instant

// Upper bounds (seconds) of sluice_cycle_duration_seconds' buckets: the controller counts
// by them and /metrics labels them.
inline constexpr double kCycleBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                           0.05,   0.1,   0.25,   0.5,   1,    2.5};

struct Controller::JobInfo {
  store::StoredJob row;  // what the store holds (the truth across restarts)
  nlohmann::json spec;   // parsed row.spec
  std::shared_ptr<const std::string> fixed_text;  // FixedJobText(spec): listings reuse it
  std::string queue;     // resolved queue name
  std::vector<std::pair<std::string, int32_t>> hosts;  // allocation by host name
  std::string launch_host;        // first host of the allocation; "" when none
  bool in_core = false;           // the core holds the job (it did not end before this start)
  bool launch_ready = false;      // its ADMITTING row committed: the launch may be sent
  int64_t launch_sent_ms = -1;    // when the launch was last sent; -1 never (this epoch)
  bool from_earlier_epoch = false;  // restored ADMITTING: unresolved until its agent reports
  std::optional<core::PendingReasons> reasons;  // from the last explained cycle
  std::string main_reason;        // last main reason logged ("" none)
  std::string message;            // why it ended, when it did not end by itself
  // Preempted (R-CAP-3, R-CAP-4; the marker is row.preempted_for and row.preempt_kill_at,
  // persisted so that a restart neither forgets why the victim is stopped nor restarts its
  // grace): its agent is told to kill it (SIGTERM, SIGKILL at the kill time) once the marker
  // committed, and its exit requeues it at its original position instead of ending it.
  bool preempt_committed = false;

  bool BeingPreempted() const { return row.preempted_for > 0; }  // the store's "none" is 0
  void ClearPreemption() {
    row.preempted_for = 0;
    row.preempt_kill_at = 0;
    preempt_committed = false;
  }

  // The main reason code of a waiting job (HELD; NEW_JOB until a cycle has explained it);
  // "" when it is not waiting.
  std::string WaitReason() const {
    if (row.state == "HELD") return "HELD";
    if (row.state != "PENDING") return "";
    return main_reason.empty() ? "NEW_JOB" : main_reason;
  }

  bool HoldsAllocation() const {
    return row.phase == kPhaseAdmitting || row.phase == kPhaseAdmitted;
  }
};

struct Controller::AgentInfo {
  std::string name;
  bool registered = false;       // registered in this epoch
  int64_t last_heartbeat_ms = 0;
  bool unavail = false;          // lease expired
  bool loss_handled = false;     // on_host_loss applied to its jobs
  int64_t poll_generation = 0;   // a newer heartbeat ends an older long poll
  std::set<JobId> jobs;          // ADMITTING/RUNNING jobs it launches (mother superior)
  // Jobs it did not list as running when it registered: resolved at its next heartbeat,
  // after the exit reports that heartbeat carries (a job that ended while the controller
  // was down must not be requeued and run twice).
  std::set<JobId> unlisted;
};

}  // namespace sluice::server
