// CycleRunner: the controller's handler of the core's drive loop (core/driver/drive_loop.h):
// one scheduling cycle at the clock's time, its decisions turned into job transitions and
// one store batch, and the cycle's duration for /metrics (R-SRV-2, R-SRV-6, R-ADM-3).
//
// Steps of Run: 1. DriveLoop::Cycle runs the cycle with explanations when due and commits
// it; it hands each decision to On*, which 2. record ADMITTING rows of started jobs
// (OnStart), EXIT rows of unschedulable ones (OnFail), the main reasons that changed
// (OnPend, logged once per change), the preemption markers of victims (OnPreempt),
// reclaim deadlines (OnReclaim) and the admission records the cycle updated (OnUpdate: the
// bypass increment commits with the StartJob that caused it, R-ADM-3); 3. one store batch
// holds them all; 4. after its commit, launches and preemption kills may go out.
// The caller runs no cycle while ADMITTING records of an earlier epoch are unresolved
// (AgentRegistry::Reconciling).
// Representation: the per-cycle batch and the jobs started and preempted live only during
// Run. The next wake-up is the latest cycle's wake_at (an earlier cycle's is dropped, so a
// timer that no longer applies runs no extra cycle).
// Thread-safety: every method REQUIRES the context's mutex held.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/cycle/scheduler.h"
#include "core/driver/drive_loop.h"
#include "server/context.h"
#include "server/job_book.h"
#include "store/store.h"

namespace sluice::server {

// Upper bounds (seconds) of sluice_cycle_duration_seconds' buckets: the runner counts by
// them and /metrics labels them.
inline constexpr double kCycleBuckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                           0.05,   0.1,   0.25,   0.5,   1,    2.5};

// Cycle durations so far (a Prometheus histogram: counts per bucket, not cumulative).
struct CycleTiming {
  std::vector<int64_t> buckets = std::vector<int64_t>(std::size(kCycleBuckets), 0);
  double sum = 0;
  int64_t count = 0;
};

class CycleRunner : public core::DecisionHandler {
 public:
  CycleRunner(ServerContext& ctx, JobBook& book)
      : ctx_(ctx), book_(book), loop_(scheduler_, ctx.mutable_state()) {}

  // Runs one cycle at the clock's time (the steps above).
  void Run();
  // The core's timer is due at `now`.
  bool WakeDue(Instant now) const { return wake_at_ && now >= *wake_at_; }
  // A cycle ran without explanations and the explain interval has passed since the last.
  bool ExplainDue(int64_t now_ms) const {
    return explain_due_ && now_ms - last_explain_ms_ >= ctx_.options().explain_interval_ms;
  }
  const CycleTiming& timing() const { return timing_; }

  // Decisions of the cycles run so far as text lines (restart equivalence tests).
  void Record(bool on) { recording_ = on; }
  const std::vector<std::string>& recorded() const { return recorded_; }

  // --- core::DecisionHandler ---
  void OnStart(const core::StartJob& start, Instant now) override;
  void OnFail(const core::FailJob& fail, Instant now) override;
  void OnPend(core::PendJob& pend, Instant now) override;
  void OnPreempt(const core::PreemptJob& preempt, Instant now) override;
  void OnReclaim(const core::UpdateReclaim& reclaim, Instant now) override;
  void OnUpdate(const core::UpdateAdmission& update, Instant now) override;

 private:
  // Whether this cycle explains pending jobs (at most every explain_interval_ms).
  bool TakeExplainTurn();
  void Time(double seconds);
  // Step 3 and 4: the batch, and what may go out once it committed.
  void Commit();
  // One line for the first main reasons of the jobs restored waiting (JobInfo::
  // restored_waiting) this cycle explained, by reason, instead of a line each.
  void LogRestoredReasons();

  ServerContext& ctx_;
  JobBook& book_;
  core::Scheduler scheduler_;
  core::DriveLoop loop_;
  std::optional<Instant> wake_at_;
  int64_t last_explain_ms_ = -1;
  bool explain_due_ = false;  // a cycle ran without explanations since the last one
  bool recording_ = false;
  std::vector<std::string> recorded_;
  CycleTiming timing_;
  // The cycle in progress.
  store::WriteBatch batch_;
  std::set<JobId> touched_;  // pending jobs whose admission record changed
  std::vector<JobId> started_;
  uint64_t runs_started_ = 0;  // numbers the runs (JobInfo::run)
  std::vector<JobId> preempted_;
  std::map<std::string, int64_t> restored_reasons_;  // LogRestoredReasons: jobs by reason
};

}  // namespace sluice::server
