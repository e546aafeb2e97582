#include "server/cycle_runner.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/array_ids.h"
#include "server/cluster_settings.h"
#include "server/memory_release.h"
#include "wire/gpu_indexes.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// The most decisions whose buffers a cycle keeps for the next (Run): ~4.7 MB of them.
constexpr size_t kDecisionsKeptAtRest = 65'536;

json AllocationJson(const core::Allocation& alloc, const core::ClusterState& state) {
  json hosts = json::array();
  for (const core::HostGrant& g : alloc.hosts) {
    json res = json::object();
    for (const core::ResourceAmount& r : g.resources)
      res[state.topology().host_resources()[r.id]] = r.amount;
    hosts.push_back({{"host", state.topology().hosts()[g.host].spec.name},
                     {"slots", g.slots},
                     {"whole_host", g.whole_host},
                     {"resources", res}});
    if (g.gpus != 0) hosts.back()["gpus"] = wire::GpuIndexes(g.gpus);
    if (g.gpu_mem_mb > 0) hosts.back()["gpu_mem_mb"] = g.gpu_mem_mb;  // shared mode
  }
  json shared = json::object();
  for (const core::ResourceAmount& r : alloc.shared)
    shared[state.topology().shared_resources()[r.id]] = r.amount;
  return {{"hosts", hosts}, {"shared", shared}};
}

}  // namespace

bool CycleRunner::TakeExplainTurn() {
  const int64_t now_ms = ctx_.NowMs();
  const bool explain =
      last_explain_ms_ < 0 || now_ms - last_explain_ms_ >= ctx_.options().explain_interval_ms;
  if (explain) last_explain_ms_ = now_ms;
  explain_due_ = !explain;
  return explain;
}

void CycleRunner::Run() {
  const Instant now = ctx_.Now();
  const auto t0 = std::chrono::steady_clock::now();
  const core::CycleOptions options{.explain = TakeExplainTurn()};
  batch_ = store::WriteBatch{};
  touched_.clear();
  started_.clear();
  preempted_.clear();
  const core::CycleResult& result = loop_.Cycle(now, options, *this);
  for (JobId id : touched_) {
    if (JobInfo* job = book_.Find(id)) book_.Stage(*job, batch_);
  }
  wake_at_ = result.wake_at;
  const size_t decided = result.decisions.size();
  Time(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  LogRestoredReasons();
  Commit();
  // At rest the controller keeps no cycle's decisions (issue 45): an explained cycle at a
  // million waiting jobs would hold ~72 MB of them until the next. The next such cycle
  // allocates its own (~10-20 ms of page faults against its ~0.5 s); small ones keep reusing.
  // Their pages go back to the system once the scheduling thread is idle (SchedulingLoop).
  if (decided > kDecisionsKeptAtRest) {
    loop_.ReleaseBuffers();
    OweRelease();
  }
}

void CycleRunner::LogRestoredReasons() {
  if (restored_reasons_.empty()) return;
  int64_t jobs = 0;
  std::string counts;
  for (const auto& [reason, n] : restored_reasons_) {
    jobs += n;
    counts += (counts.empty() ? "" : ", ") + reason + " " + std::to_string(n);
  }
  ctx_.log().info("restart: {} restored waiting jobs explained: {}", jobs, counts);
  restored_reasons_.clear();
}

void CycleRunner::Time(double seconds) {
  timing_.sum += seconds;
  ++timing_.count;
  for (size_t i = 0; i < std::size(kCycleBuckets); ++i) {
    if (seconds <= kCycleBuckets[i]) ++timing_.buckets[i];
  }
}

void CycleRunner::Commit() {
  if (batch_.empty()) return;
  ctx_.writes().Write(std::exchange(batch_, {}), [this, started = std::exchange(started_, {}),
                                               preempted = std::exchange(preempted_, {})] {
    for (JobId id : started) {
      JobInfo* job = book_.Find(id);
      if (job != nullptr && job->phase() == core::AdmissionPhase::kAdmitting) {
        job->launch_ready = true;
        ctx_.wakeups().Mark(job->launch().launch_host);
      }
    }
    for (JobId id : preempted) {  // their agents' long polls answer with the kills
      JobInfo* job = book_.Find(id);
      if (job != nullptr && job->BeingPreempted()) {
        job->preempt_committed = true;
        ctx_.wakeups().Mark(job->launch().launch_host);
      }
    }
  });
}

void CycleRunner::OnStart(const core::StartJob& start, Instant now) {
  JobInfo* job = book_.Find(start.job);
  if (job == nullptr) return;
  // The allocation has moved into the state's job (DriveLoop::Cycle).
  const core::Allocation& allocation = ctx_.state().FindJob(start.job)->allocation;
  std::vector<std::pair<std::string, int32_t>> hosts;
  std::string hosts_text;
  for (const core::HostGrant& g : allocation.hosts) {
    hosts.emplace_back(ctx_.state().topology().hosts()[g.host].spec.name, g.slots);
    hosts_text +=
        (hosts_text.empty() ? "" : ",") + hosts.back().first + ":" + std::to_string(g.slots);
  }
  book_.SetHosts(*job, std::move(hosts));
  job->row.allocation = AllocationJson(allocation, ctx_.state()).dump();
  job->SetPhase(core::AdmissionPhase::kAdmitting);
  job->row.start_time = now;
  job->launch_ready = false;
  job->mutable_launch().launch_sent_ms = -1;
  // Unique across leaders too: a later epoch's runs number above an earlier one's.
  job->mutable_launch().run =
      (ctx_.writes().epoch() << 40) | (++runs_started_ & ((uint64_t{1} << 40) - 1));
  job->ClearReasons();  // and restored_waiting
  started_.push_back(job->row.id);
  touched_.erase(job->row.id);
  book_.SetState(*job, JobState::kAdmitting,
                 "on " + hosts_text + (start.backfilled ? " (backfilled)" : ""), batch_);
  if (recording_) {
    recorded_.push_back("start " + std::to_string(start.job) + " " + hosts_text +
                        (start.backfilled ? " backfilled" : ""));
  }
}

void CycleRunner::OnFail(const core::FailJob& fail, Instant now) {
  JobInfo* job = book_.Find(fail.job);
  if (job == nullptr) return;
  job->SetPhase(core::AdmissionPhase::kEnded);
  job->row.end_time = now;
  job->row.cause = std::string(core::ToString(fail.cause));
  job->message = fail.message;
  touched_.erase(job->row.id);
  book_.SetState(*job, JobState::kExit, "(" + job->row.cause + ": " + fail.message + ")", batch_);
  if (recording_) recorded_.push_back("fail " + std::to_string(fail.job) + " " + job->row.cause);
}

void CycleRunner::OnPend(core::PendJob& pend, Instant /*now*/) {
  JobInfo* job = book_.Find(pend.job);
  if (job == nullptr) return;
  const core::ReasonCode code = pend.reasons.main;
  job->SetReasons(std::move(pend.reasons));
  const std::string main(core::ToString(code));
  if (main != job->main_reason) {
    // R-SRV-6: one line per change of the main reason, never one per cycle.
    if (job->restored_waiting) {
      ++restored_reasons_[main];
    } else {
      ctx_.log().info("job {}: pending: {} ({})", FormatJobId(job->row.id), main,
                      core::Headline(code));
    }
    job->main_reason = main;
    book_.Emit(*job);
  }
  job->restored_waiting = false;
  // An array shows the reason of its last explained element (R-UX-3).
  if (IsArrayElement(pend.job)) {
    JobInfo* array = book_.Find(ArrayIdOf(pend.job));
    if (array != nullptr && IsWaiting(array->state())) array->main_reason = main;
  }
  if (recording_) recorded_.push_back("pend " + std::to_string(pend.job) + " " + main);
}

void CycleRunner::OnPreempt(const core::PreemptJob& preempt, Instant now) {
  JobInfo* job = book_.Find(preempt.victim);
  if (job == nullptr) return;
  // The marker commits with the cycle's batch; the kill goes out after that (Commit).
  job->row.preempted_for = preempt.for_job;
  job->row.preempt_kill_at = preempt.kill_at;
  job->preempt_committed = false;
  book_.Stage(*job, batch_);
  preempted_.push_back(job->row.id);
  ctx_.log().info("job {}: preempted for job {} (SIGTERM now, SIGKILL after {} s)",
                    FormatJobId(job->row.id),
                 preempt.for_job, std::max<int64_t>(0, preempt.kill_at - now));
  if (recording_) {
    recorded_.push_back("preempt " + std::to_string(preempt.victim) + " for " +
                        std::to_string(preempt.for_job));
  }
}

void CycleRunner::OnReclaim(const core::UpdateReclaim& reclaim, Instant /*now*/) {
  // Committed with the cycle's batch, like the admission records.
  const std::string& queue = ctx_.state().topology().queues()[reclaim.queue].spec.name;
  batch_.settings[std::string(kSettingReclaimDeadline) + "/" + queue] = reclaim.deadline;
  if (recording_) {
    recorded_.push_back("reclaim " + queue + " " + std::to_string(reclaim.deadline.value_or(-1)));
  }
}

void CycleRunner::OnUpdate(const core::UpdateAdmission& update, Instant /*now*/) {
  const core::Job* cj = ctx_.state().FindJob(update.job);
  if (cj != nullptr &&
      (cj->state == core::JobState::kPending || cj->state == core::JobState::kHeld)) {
    touched_.insert(update.job);
  }
  if (recording_) {
    recorded_.push_back("update " + std::to_string(update.job) +
                        " bypass=" + std::to_string(update.bypass_count) +
                        " first_blocked=" + std::to_string(update.first_blocked.value_or(-1)) +
                        " gate_since=" + std::to_string(update.gate_since.value_or(-1)));
  }
}

}  // namespace sluice::server
