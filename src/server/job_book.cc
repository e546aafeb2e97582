#include "server/job_book.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/array_ids.h"
#include "server/fixed_text_pool.h"
#include "server/job_arrays.h"
#include "server/job_events.h"
#include "server/job_identity.h"
#include "server/job_spec.h"
#include "store/history.h"
#include "wire/gpu_indexes.h"
#include "wire/job_json.h"

namespace sluice::server {

// A pending job's record and its make_shared control block fill mimalloc's 384-byte size
// class (issue 45: a million pending jobs); a member that grows it costs 64 bytes a job.
static_assert(sizeof(void*) != 8 || sizeof(JobInfo) <= 368,
              "JobInfo outgrew 368 bytes: see the member order note in job_book.h");

using nlohmann::json;

namespace {

core::ExitCause CoreCause(const std::string& cause, int32_t exit_code) {
  if (cause == "RUN_LIMIT") return core::ExitCause::kRunLimit;
  if (cause == "HOST_LOST") return core::ExitCause::kHostLost;
  if (cause.empty() && exit_code == 0) return core::ExitCause::kNone;
  return core::ExitCause::kNonZeroExit;
}

}  // namespace

// Whether a record may drop its spec's text once stored (issue 45): the store serves specs by
// id, and every record the book keeps has its row there, i.e. the store does not delete an
// ended job's row (its history retention, keep_history_seconds) before the book forgets the
// job (keep_ended_seconds). Otherwise a record would outlive its spec: the history of the job,
// its details and a requeue of it read the spec.
bool DropsStoredSpecs(const ServerContext& ctx) {
  const store::Store& store = ctx.writes().store();
  if (!store.ServesSpecs()) return false;
  if (!store.PurgesHistory()) return true;
  const int64_t history = ctx.options().keep_history_seconds;  // < 0: rows never deleted
  const int64_t ended = ctx.options().keep_ended_seconds;      // < 0: records kept for ever
  return history < 0 || (ended >= 0 && ended < history);
}

const LaunchRecord JobInfo::kNoLaunch;

void JobInfo::EndLaunch() {
  if (!launch_) return;
  launch_->hosts.clear();
  launch_->launch_host.clear();
  launch_->launch_sent_ms = -1;
  launch_->run = 0;  // the next start numbers its run (a lost one is in lost_run)
  if (launch_->empty()) launch_.reset();
}

void JobInfo::SetState(JobState state) { state_ = state; }

void JobInfo::SetPhase(core::AdmissionPhase phase) { phase_ = phase; }

store::StoredJob JobInfo::Stored() const { return row.Stored(ToString(state_), ToString(phase_)); }

const std::string& JobInfo::StateText() const { return ToText(state_); }

const std::string& JobInfo::PhaseText() const { return ToText(phase_); }

void JobInfo::SetSpec(const json& spec) {
  row.spec = SparseText(spec.dump());
  AdoptSpec(spec);
}

void JobInfo::AdoptSpec(const json& spec) {
  if (!spec.is_object()) return;
  user = InternedText(spec.value("user", ""));
  account = InternedText(AccountOf(spec));
  reservation = InternedText(spec.value("reservation", ""));
  const json& limit = spec.contains("run_limit") ? spec["run_limit"] : json();
  run_limit = limit.is_number_integer() ? limit.get<int64_t>() : 0;
  max_tasks = spec.value("max_tasks", 1);
  has_array = spec.contains("array");
}

std::string JobInfo::WaitReason() const {
  if (state_ == JobState::kHeld) return std::string(core::ToString(core::ReasonCode::kHeld));
  if (state_ != JobState::kPending) return "";
  return main_reason.empty() ? std::string(core::ToString(core::ReasonCode::kNewJob))
                             : main_reason.str();
}

// --- Records ------------------------------------------------------------------------------------

JobInfo* JobBook::Find(JobId id) {
  auto it = jobs_.find(id);
  if (it != jobs_.end()) return it->second.get();
  return IsArrayElement(id) ? AddElement(id) : nullptr;
}

void JobBook::Add(std::shared_ptr<JobInfo> job) {
  next_id_ = std::max(next_id_, ArrayIdOf(job->row.id) + 1);
  NoteNotEstimated(*Put(std::move(job)));
}

std::shared_ptr<const core::StartEstimate> JobBook::EstimateOf(const JobInfo& job) const {
  if (job.estimate) return job.estimate;
  if (forecast_cut_ && not_estimated_.contains(job.row.id)) return not_yet_;
  return unestimated_;
}

void JobBook::NoteNotEstimated(JobInfo& job) {
  job.estimate.reset();
  if (forecast_cut_) not_estimated_.insert(job.row.id);
}

void JobBook::SetUnestimated(bool cut, std::string why) {
  if (!cut) {
    unestimated_ = not_yet_;
  } else if (unestimated_->unknown_because != why) {
    unestimated_ = std::make_shared<const core::StartEstimate>(
        core::StartEstimate{.unknown_because = std::move(why)});
  }
}

JobInfo* JobBook::Put(std::shared_ptr<JobInfo> job) {
  JobInfo* raw = job.get();
  auto [it, added] = jobs_.try_emplace(raw->row.id, nullptr);
  if (!added) Uncount(*it->second);  // replaced
  it->second = std::move(job);
  Recount(*raw);
  return raw;
}

void JobBook::Drop(JobId id) {
  if (auto it = jobs_.find(id); it != jobs_.end()) Uncount(*it->second);
  jobs_.erase(id);
}

void JobBook::Withdraw(JobId id) {
  (void)ctx_.ApplyLocked(core::JobWithdrawn{id}, "withdraw");
  Drop(id);
}

const std::set<JobId>& JobBook::LaunchedBy(const std::string& host) const {
  static const std::set<JobId> kNone;
  auto it = launched_.find(host);
  return it == launched_.end() ? kNone : it->second;
}

void JobBook::SetHosts(JobInfo& job, std::vector<std::pair<std::string, int32_t>> hosts) {
  LaunchRecord& launch = job.mutable_launch();
  launch.hosts = std::move(hosts);
  launch.launch_host = launch.hosts.front().first;
  launched_[launch.launch_host].insert(job.row.id);
  if (job.run_limit_pending) NoteRunLimitOrder(job);  // an order not taken before a requeue
}

void JobBook::NoteRunLimitOrder(const JobInfo& job) {
  if (!job.launch().launch_host.empty()) run_limit_hosts_.insert(job.launch().launch_host);
}

void JobBook::Unindex(const JobInfo& job) {
  if (auto it = launched_.find(job.launch().launch_host); it != launched_.end()) {
    it->second.erase(job.row.id);
  }
  if (on_released_) on_released_(job.row.id);
}

// --- Specs --------------------------------------------------------------------------------------

std::string JobBook::SpecText(const JobInfo& job) const {
  if (!job.row.spec.empty()) return job.row.spec.str();
  Result<std::string> stored = ctx_.writes().store().ReadSpec(job.row.id);
  if (!stored) {
    ctx_.log().error("job {}: cannot read its spec: {}", FormatJobId(job.row.id),
                     stored.error().message());
    return std::string();
  }
  return std::move(*stored);
}

json JobBook::Spec(const JobInfo& job) const {
  return json::parse(SpecText(job), nullptr, /*allow_exceptions=*/false);
}

store::StoredJob JobBook::StoredWithSpec(const JobInfo& job) const {
  store::StoredJob row = job.Stored();
  if (row.spec.empty()) row.spec = SpecText(job);
  return row;
}

void JobBook::SpecsStored(const std::vector<SpecWritten>& written) {
  if (!DropsStoredSpecs(ctx_)) return;
  for (const SpecWritten& w : written) {
    auto it = jobs_.find(w.id);  // not Find: it may add an array element's record
    if (it == jobs_.end()) continue;
    JobInfo* job = it->second.get();
    if (job->row.spec.empty() || IsArrayParent(*job)) continue;
    // Changed since (a `modify` queued after this write): that text is not stored yet.
    if (std::hash<std::string>{}(job->row.spec.str()) != w.hash) continue;
    job->row.spec.clear();
  }
}

// --- Transitions --------------------------------------------------------------------------------

void JobBook::SyncRow(JobInfo& job) {
  job.row.epoch = ctx_.writes().epoch();
  job.row.message = job.message;  // kept across restarts (MEM_LIMIT's limit and peak)
  if (!job.in_core) return;
  const core::Job* cj = ctx_.state().FindJob(job.row.id);
  if (cj == nullptr) return;
  job.row.seq = cj->seq;
  job.row.enqueue_time = cj->admission.enqueue_time;
  job.row.policy = std::string(core::ToString(cj->admission.policy));
  job.row.bypass_count = cj->admission.bypass_count;
  job.row.first_blocked = cj->admission.first_blocked;
  job.row.gate_since = cj->admission.gate_since;
  job.row.start_seq = cj->start_seq;
}

void JobBook::Stage(JobInfo& job, store::WriteBatch& batch) {
  SyncRow(job);
  batch.jobs.push_back(job.Stored());
  if (IsArrayElement(job.row.id)) StageArray(ArrayIdOf(job.row.id), batch);
}

void JobBook::SetState(JobInfo& job, JobState state, const std::string& why,
                       store::WriteBatch& batch) {
  if (job.state() != state) {
    ctx_.log().info("job {}: {} -> {}{}{}", FormatJobId(job.row.id), ToString(job.state()),
                    ToString(state), why.empty() ? "" : " ", why);
  }
  job.SetState(state);
  if (!IsWaiting(state)) job.main_reason.clear();
  // Retention counts from when the end was recorded (a cancelled job's end_time is the
  // cancel; its kill may be reported much later).
  if (job.phase() == core::AdmissionPhase::kEnded) ended_by_time_.insert({ctx_.Now(), job.row.id});
  Stage(job, batch);
  Emit(job);
}

nlohmann::json JobBook::RunLimitOf(const JobInfo& job) const {
  if (!run_limit_source_.limit) return job.run_limit > 0 ? json(job.run_limit) : json(nullptr);
  const std::optional<int64_t> limit = run_limit_source_.limit(job);
  return limit ? nlohmann::json(*limit) : nlohmann::json(nullptr);
}

void JobBook::Finish(JobInfo& job, int32_t exit_code, const std::string& cause, bool killed,
                     store::WriteBatch& batch) {
  const Instant now = ctx_.Now();
  if (cause == "RUN_LIMIT" && run_limit_source_.end_message) {
    // Its reservation's window ended it, not its own limit: the record says so (R-RSV-2).
    if (std::string why = run_limit_source_.end_message(job); !why.empty()) job.message = why;
  }
  // Only a run lost with its host and then reported ended ends a waiting job (agent_registry.cc).
  const bool lost_run = job.phase() == core::AdmissionPhase::kPending;
  Unindex(job);
  job.row.exit_code = exit_code;
  job.row.end_time = job.row.end_time != 0 && job.row.cancel_requested ? job.row.end_time : now;
  job.SetPhase(core::AdmissionPhase::kEnded);  // the allocation stays in the row: where it ran
  job.ClearPreemption();
  ctx_.cycle().MarkDirty();
  if (job.row.cancel_requested) {
    (void)ctx_.ApplyLocked(core::JobCancelled{job.row.id}, "");
    SetState(job, JobState::kCancelled, killed ? "(killed)" : "(ended after cancel)", batch);
    return;
  }
  (void)ctx_.ApplyLocked(
      core::JobFinished{job.row.id, exit_code, CoreCause(cause, exit_code), lost_run},
      "job " + std::to_string(job.row.id) + ": finish");
  const bool done = cause.empty() && exit_code == 0;
  job.row.cause = done ? "" : (cause.empty() ? "NON_ZERO_EXIT" : cause);
  SetState(job, done ? JobState::kDone : JobState::kExit,
           done ? "(exit 0)" : "(" + job.row.cause + ", exit " + std::to_string(exit_code) + ")",
           batch);
}

void JobBook::Requeue(JobInfo& job, const std::string& why, store::WriteBatch& batch) {
  Unindex(job);
  job.ClearPreemption();
  ctx_.cycle().MarkDirty();
  if (job.row.cancel_requested) {
    job.SetPhase(core::AdmissionPhase::kEnded);
    job.row.allocation.clear();
    (void)ctx_.ApplyLocked(core::JobCancelled{job.row.id}, "");
    SetState(job, JobState::kCancelled, "(never ran)", batch);
    return;
  }
  (void)ctx_.ApplyLocked(core::JobRequeued{job.row.id},
                         "job " + std::to_string(job.row.id) + ": requeue");
  job.SetPhase(core::AdmissionPhase::kPending);
  NoteRequeue(job.row, job.StateText(), ctx_.Now(), why);
  job.row.allocation.clear();
  job.row.start_time = 0;
  job.EndLaunch();
  job.launch_ready = false;
  job.from_earlier_epoch = false;
  SetState(job, JobState::kPending,
           "(requeued at sequence " + std::to_string(job.row.seq) + ": " + why + ")", batch);
}

void JobBook::ConfirmRunning(JobInfo& job, const std::string& why, store::WriteBatch& batch) {
  job.SetPhase(core::AdmissionPhase::kAdmitted);
  // It runs again: a late end of the lost run can no longer stop that.
  if (job.launch().lost_run != 0 || !job.launch().lost_host.empty()) {
    job.mutable_launch().lost_run = 0;
    job.mutable_launch().lost_host.clear();
  }
  job.from_earlier_epoch = false;
  if (job.row.cancel_requested) {
    batch.jobs.push_back(job.Stored());  // stays CANCELLED: its kill is on the way
  } else {
    SetState(job, JobState::kRunning, why, batch);
  }
}

namespace {

// The run lost with its host, and that host: its late exit report ends the job if the job has
// not run since (JobInfo::lost_run; AgentRegistry's EndsLostRun).
void RememberLostRun(JobInfo& job) {
  LaunchRecord& launch = job.mutable_launch();
  launch.lost_run = launch.run;
  launch.lost_host = launch.launch_host;
}

}  // namespace

void JobBook::Lose(JobInfo& job, const std::string& why, store::WriteBatch& batch) {
  const core::ClusterState& cs = ctx_.state();
  const core::Job* cj = cs.FindJob(job.row.id);
  const bool requeue =
      cj != nullptr && !job.row.cancel_requested &&
      (job.requeue_requested ||
       cs.topology().queues()[cj->queue].spec.on_host_loss == core::OnHostLoss::kRequeue);
  job.requeue_requested = false;
  if (requeue) {
    RememberLostRun(job);
    Requeue(job, why, batch);
  } else {
    Finish(job, -1, "HOST_LOST", false, batch);
  }
}

void JobBook::LoseLaunch(JobInfo& job, const std::string& why, store::WriteBatch& batch) {
  if (job.from_earlier_epoch || job.launch().launch_sent_ms >= 0) RememberLostRun(job);
  Requeue(job, why, batch);
}

// --- Retention ----------------------------------------------------------------------------------

void JobBook::ForgetEnded() {
  if (ctx_.options().keep_ended_seconds < 0) return;
  const Instant cutoff = ctx_.Now() - ctx_.options().keep_ended_seconds;
  while (!ended_by_time_.empty() && ended_by_time_.begin()->first <= cutoff) {
    const JobId id = ended_by_time_.begin()->second;
    ended_by_time_.erase(ended_by_time_.begin());
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second->phase() != core::AdmissionPhase::kEnded) continue;
    if (it->second->in_core) {
      (void)ctx_.ApplyLocked(core::JobForgotten{id}, "job " + std::to_string(id) + ": forget");
    }
    Drop(id);
  }
}

// --- Counts -------------------------------------------------------------------------------------

namespace {

void Bump(std::map<std::pair<std::string, std::string>, int64_t>& counts, const std::string& a,
          const std::string& b, int64_t n) {
  auto it = counts.try_emplace({a, b}, 0).first;
  it->second += n;
  if (it->second == 0) counts.erase(it);
}

}  // namespace

void JobBook::Uncount(JobInfo& job) {
  JobInfo::CountedAs& was = job.counted_as;
  if (!was.counted()) return;
  Bump(counts_.by_state, was.state, was.queue, -1);
  Bump(counts_.by_user, was.user, was.state, -1);
  if (!was.reason.empty()) Bump(counts_.by_reason, was.reason, was.queue, -1);
  was = {};
}

void JobBook::Recount(JobInfo& job) {
  if (IsArrayParent(job)) return;  // its elements are the jobs
  JobInfo::CountedAs& was = job.counted_as;
  const std::string reason = job.WaitReason();
  const InternedText user = job.user;
  if (was.counted() && was.state == job.StateText() && was.queue == job.queue && was.user == user &&
      was.reason == reason) {
    return;
  }
  if (was.counted() && !store::IsEndedState(was.state) && store::IsEndedState(job.StateText())) {
    ++ended_totals_[{job.StateText(), job.queue}];
  }
  Uncount(job);
  Bump(counts_.by_state, job.StateText(), job.queue, 1);
  Bump(counts_.by_user, user, job.StateText(), 1);
  if (!reason.empty()) Bump(counts_.by_reason, reason, job.queue, 1);
  was = {.state = InternedText(job.StateText()),
         .queue = job.queue,
         .user = user,
         .reason = InternedText(reason)};
}

JobCounts JobBook::CountAll() const {
  JobCounts counts;
  for (const auto& [id, job] : jobs_) {
    if (IsArrayParent(*job)) continue;
    Bump(counts.by_state, job->StateText(), job->queue, 1);
    Bump(counts.by_user, job->user, job->StateText(), 1);
    if (std::string reason = job->WaitReason(); !reason.empty()) {
      Bump(counts.by_reason, reason, job->queue, 1);
    }
  }
  return counts;
}

std::map<std::string, int64_t> JobBook::SlotsHeldByUser() const {
  std::map<std::string, int64_t> slots;
  for (const auto& [host, ids] : launched_) {
    for (JobId id : ids) {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) continue;
      const JobInfo& job = *it->second;
      int64_t& held = slots[job.user];
      for (const auto& [name, n] : job.launch().hosts) held += n;
    }
  }
  return slots;
}

// --- Job events ---------------------------------------------------------------------------------

int JobBook::Subscribe(std::function<void(const JobEvent&)> listener) {
  const int id = next_listener_++;
  listeners_[id] = std::move(listener);
  return id;
}

void JobBook::Unsubscribe(int id) { listeners_.erase(id); }

void JobBook::Emit(JobInfo& job) {
  Recount(job);
  if (listeners_.empty()) return;
  JobEvent event{.id = job.row.id,
                 .state = job.StateText(),
                 .cpu_seconds = job.row.cpu_seconds,
                 .max_rss_mb = job.row.max_rss_mb};
  if (!job.main_reason.empty() && IsWaiting(job.state())) event.reason = job.main_reason;
  for (auto& [id, listener] : listeners_) listener(event);
}

}  // namespace sluice::server
