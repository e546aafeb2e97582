// Controller core: restore, the cycle, leases and job transitions. The user and agent APIs
// are in controller_users.cc and controller_agents.cc; metrics in metrics.cc.
#include "server/controller.h"

#include <algorithm>
#include <chrono>
#include <future>

#include <spdlog/spdlog.h>

#include "core/cycle/events.h"
#include "server/controller_internal.h"
#include "server/job_spec.h"
#include "server/job_text.h"

namespace sluice::server {

using nlohmann::json;

namespace {

json AllocationJson(const core::Allocation& alloc, const core::ClusterState& state) {
  json hosts = json::array();
  for (const core::HostGrant& g : alloc.hosts) {
    json res = json::object();
    for (const core::ResourceAmount& r : g.resources) res[state.host_resources()[r.id]] = r.amount;
    hosts.push_back({{"host", state.hosts()[g.host].spec.name},
                     {"slots", g.slots},
                     {"whole_host", g.whole_host},
                     {"resources", res}});
  }
  json shared = json::object();
  for (const core::ResourceAmount& r : alloc.shared) shared[state.shared_resources()[r.id]] = r.amount;
  return {{"hosts", hosts}, {"shared", shared}};
}

// The allocation of a stored row, or an error when the cluster no longer has its hosts or
// resources.
Result<core::Allocation> DecodeAllocation(const std::string& text, const core::ClusterState& state) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("bad allocation " + text);
  core::Allocation alloc;
  for (const json& h : j.value("hosts", json::array())) {
    auto host = state.FindHost(h.value("host", ""));
    if (!host) return NotFound("no host " + h.value("host", ""));
    core::HostGrant grant{.host = *host, .slots = h.value("slots", 0),
                          .whole_host = h.value("whole_host", false)};
    for (auto it = h["resources"].begin(); it != h["resources"].end(); ++it) {
      auto id = state.FindHostResource(it.key());
      if (!id) return NotFound("no host resource " + it.key());
      grant.resources.push_back({*id, it.value().get<int64_t>()});
    }
    alloc.hosts.push_back(std::move(grant));
  }
  for (auto it = j["shared"].begin(); it != j["shared"].end(); ++it) {
    auto id = state.FindSharedResource(it.key());
    if (!id) return NotFound("no shared resource " + it.key());
    alloc.shared.push_back({*id, it.value().get<int64_t>()});
  }
  return alloc;
}

bool Fits(const core::Allocation& alloc, const core::ClusterState& state) {
  for (const core::HostGrant& g : alloc.hosts) {
    const core::Host& host = state.hosts()[g.host];
    if (!host.AcceptsWork() || host.SlotsTaken(g) > host.FreeSlots()) return false;
    if (g.whole_host && host.running_jobs > 0) return false;
    for (const core::ResourceAmount& r : g.resources) {
      if (r.amount > host.ResourceFree(r.id)) return false;
    }
  }
  for (const core::ResourceAmount& r : alloc.shared) {
    if (r.amount > state.SharedTotal(r.id) - state.SharedUsed(r.id)) return false;
  }
  return true;
}

core::ExitCause CoreCause(const std::string& cause, int32_t exit_code) {
  if (cause == "RUN_LIMIT") return core::ExitCause::kRunLimit;
  if (cause == "HOST_LOST") return core::ExitCause::kHostLost;
  if (cause.empty() && exit_code == 0) return core::ExitCause::kNone;
  return core::ExitCause::kNonZeroExit;
}

}  // namespace

Controller::Controller(core::ClusterState state, core::ClusterConfig config,
                       config::AuthConfig auth, store::Store* store, ControllerOptions options,
                       ClockMs clock, std::shared_ptr<spdlog::logger> log)
    : state_(std::move(state)),
      base_config_(std::move(config)),
      auth_(std::move(auth)),
      store_(store),
      options_(std::move(options)),
      clock_(std::move(clock)),
      log_(std::move(log)),
      cycle_buckets_(std::size(kCycleBuckets), 0) {}

Controller::~Controller() {
  Stop();
  // Store callbacks refer to this controller: let them all run before it goes.
  store_->Flush();
}

Result<std::unique_ptr<Controller>> Controller::Create(core::ClusterConfig config,
                                                       config::AuthConfig auth,
                                                       store::Store* store,
                                                       ControllerOptions options, ClockMs clock,
                                                       std::shared_ptr<spdlog::logger> log) {
  Result<core::ClusterState> state = core::ClusterState::Create(config);
  if (!state) return state.error();
  if (!log) log = spdlog::default_logger();
  std::unique_ptr<Controller> c(new Controller(std::move(*state), std::move(config),
                                               std::move(auth), store, std::move(options),
                                               std::move(clock), std::move(log)));
  c->epoch_ = store->epoch();
  c->start_ms_ = c->NowMs();
  Result<store::Snapshot> snap = store->Load();
  if (!snap) return snap.error();
  SLUICE_RETURN_IF_ERROR(c->Restore(*snap));
  return c;
}

// Steps: 1. hosts agents added earlier; 2. every unfinished job through Restore in id order
// (its stored sequence and admission record); 3. allocations of ADMITTING/RUNNING jobs in
// start order, and the preemption markers of victims being stopped; administrators' queue
// and host overrides and queues' reclaim deadlines; 4. every host unavailable until its agent registers (an agent not yet back is
// unknown, not idle).
Status Controller::Restore(const store::Snapshot& snap) {
  std::lock_guard lock(mu_);
  config_version_ = snap.config_version;
  for (const store::StoredHost& h : snap.hosts) {
    if (state_.FindHost(h.name)) continue;  // now in the cluster YAML
    json j = json::parse(h.spec, nullptr, false);
    core::HostSpec spec{.name = h.name};
    if (j.is_object()) {
      spec.slots = j.value("slots", 1);
      spec.resources = j.value("resources", std::map<std::string, int64_t>{});
      spec.attributes = j.value("attributes", std::map<std::string, std::string>{});
      spec.tags = j.value("tags", std::vector<std::string>{});
    }
    SLUICE_RETURN_IF_ERROR(state_.AddHost(spec));
    dynamic_hosts_.insert(h.name);
  }
  // Administrators' overrides (queues opened/closed/activated/inactivated, hosts closed).
  for (const auto& [key, value] : snap.settings) {
    const size_t slash = key.find('/');
    if (slash == std::string::npos) continue;
    const std::string kind = key.substr(0, slash);
    const std::string name = key.substr(slash + 1);
    if (kind == kSettingQueueOpen) queue_open_[name] = value != 0;
    if (kind == kSettingQueueActive) queue_active_[name] = value != 0;
    if (kind == kSettingHostClosed) admin_closed_hosts_.insert(name);
  }
  if (!queue_open_.empty() || !queue_active_.empty()) {
    Status s = state_.Reconfigure(EffectiveConfigLocked(base_config_));
    if (!s.ok()) log_->error("queue overrides not restored: {}", s.message());
  }
  std::vector<JobInfo*> holding;
  const Instant now = Now();
  for (const store::StoredJob& row : snap.jobs) {
    next_id_ = std::max(next_id_, row.id + 1);
    if (row.phase == kPhaseEnded) {
      // Not restored into the core; dependencies that name it keep its verdict.
      const core::JobState ended = row.state == "DONE"        ? core::JobState::kDone
                                   : row.state == "CANCELLED" ? core::JobState::kCancelled
                                                              : core::JobState::kExit;
      // start_seq, not start_time: a requeue clears the start time, not the fact it started.
      const bool started = row.start_seq != 0 || row.start_time != 0 || !row.allocation.empty();
      Status noted = state_.NoteEnded(row.id, ended, started);
      if (!noted.ok()) log_->error("job {}: {}", row.id, noted.message());
      if (options_.keep_ended_seconds >= 0 && row.end_time + options_.keep_ended_seconds <= now) {
        continue;  // ended long ago: only in the store
      }
      ended_by_time_.insert({row.end_time, row.id});
    }
    auto info = std::make_unique<JobInfo>();
    info->row = row;
    info->spec = json::parse(row.spec, nullptr, false);
    if (!info->spec.is_object()) {
      log_->error("job {}: stored spec is not JSON; skipped", row.id);
      continue;
    }
    info->fixed_text = FixedJobText(info->spec);
    info->queue = info->spec.value("queue", "");
    if (info->queue.empty() && !state_.queues().empty()) {
      info->queue = state_.queues()[state_.default_queue()].spec.name;
    }
    if (row.phase == kPhaseEnded && !row.allocation.empty()) {
      json alloc = json::parse(row.allocation, nullptr, false);
      if (alloc.is_object()) {
        for (const json& g : alloc.value("hosts", json::array())) {
          info->hosts.emplace_back(g.value("host", ""), g.value("slots", 0));
        }
      }
    }
    if (row.phase != kPhaseEnded) {
      core::JobSpec spec = ToCoreSpec(info->spec, row.id);
      spec.hold = row.state == "HELD";
      core::AdmissionRecord record{
          .enqueue_time = row.enqueue_time,
          .spec_digest = core::SpecDigest(spec),
          .policy = core::ParsePolicyKind(row.policy).value_or(core::PolicyKind::kFifo),
          .bypass_count = row.bypass_count,
          .first_blocked = row.first_blocked,
          .gate_since = row.gate_since,
          .epoch = row.epoch};
      Status s = state_.Restore(spec, row.seq, record);
      if (!s.ok()) {
        log_->error("job {}: cannot restore: {}", row.id, s.message());
      } else {
        info->in_core = true;
        const core::Job* job = state_.FindJob(row.id);
        info->queue = state_.queues()[job->queue].spec.name;
        if (info->HoldsAllocation()) holding.push_back(info.get());
      }
    }
    jobs_[row.id] = std::move(info);
  }
  std::sort(holding.begin(), holding.end(),
            [](const JobInfo* a, const JobInfo* b) { return a->row.start_seq < b->row.start_seq; });
  store::WriteBatch batch;
  for (JobInfo* info : holding) {
    Result<core::Allocation> alloc = DecodeAllocation(info->row.allocation, state_);
    if (!alloc || alloc->hosts.empty() || !Fits(*alloc, state_)) {
      // The configuration changed under it: it cannot hold those slots; it waits again.
      log_->error("job {}: stored allocation no longer fits; requeued", info->row.id);
      info->row.phase = kPhasePending;
      info->row.state = info->row.cancel_requested ? "CANCELLED" : "PENDING";
      info->row.allocation.clear();
      info->ClearPreemption();
      if (info->row.cancel_requested) {
        (void)state_.Cancel(info->row.id, Now());
        info->row.phase = kPhaseEnded;
        info->row.end_time = Now();
        ended_by_time_.insert({info->row.end_time, info->row.id});
      }
      batch.jobs.push_back(info->row);
      continue;
    }
    state_.Start(info->row.id, *alloc, info->row.start_time);
    if (info->BeingPreempted()) {
      // The victim keeps being stopped for the same job, with the same kill time.
      state_.MarkPreempted(info->row.id, info->row.preempted_for);
      info->preempt_committed = true;
    }
    for (const core::HostGrant& g : alloc->hosts) {
      info->hosts.emplace_back(state_.hosts()[g.host].spec.name, g.slots);
    }
    info->launch_host = info->hosts.front().first;
    info->from_earlier_epoch = info->row.phase == kPhaseAdmitting;
    info->launch_ready = true;
    auto& agent = agents_[info->launch_host];
    if (!agent) {
      agent = std::make_unique<AgentInfo>();
      agent->name = info->launch_host;
      agent->last_heartbeat_ms = start_ms_;
    }
    agent->jobs.insert(info->row.id);
  }
  for (const core::Host& host : state_.hosts()) {
    SLUICE_RETURN_IF_ERROR(state_.SetHostState(host.spec.name, core::HostState::kUnavail));
  }
  // Reclaim deadlines (R-CAP-3): a restart does not give a starved queue a new grace.
  for (const core::Queue& queue : state_.queues()) {
    auto it = snap.settings.find(std::string(kSettingReclaimDeadline) + "/" + queue.spec.name);
    if (it != snap.settings.end()) state_.SetReclaimDeadline(queue.index, it->second);
  }
  log_->info("epoch {}: restored {} jobs ({} holding allocations), {} agent hosts", epoch_,
             jobs_.size(), holding.size(), dynamic_hosts_.size());
  if (!batch.empty()) WriteLocked(std::move(batch));
  dirty_ = true;
  return Status::Ok();
}

// --- Writes -----------------------------------------------------------------------------------

void Controller::WriteLocked(store::WriteBatch batch, std::function<void()> then) {
  store_->Write(std::move(batch), [this, then = std::move(then)](const Status& status) {
    if (!status.ok()) {
      // Fenced or the disk failed: this controller may no longer act (R-SRV-2).
      log_->critical("store write failed: {}; stopping", status.message());
      log_->flush();
      std::_Exit(3);
    }
    if (then) {
      std::lock_guard lock(mu_);
      then();
    }
    work_cv_.notify_all();
  });
}

Status Controller::WriteAndWait(std::unique_lock<std::mutex>& lock, store::WriteBatch batch) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> future = done->get_future();
  store_->Write(std::move(batch), [this, done](const Status& status) {
    if (!status.ok()) {
      log_->critical("store write failed: {}; stopping", status.message());
      log_->flush();
      std::_Exit(3);
    }
    done->set_value();
  });
  lock.unlock();
  future.wait();
  lock.lock();
  return Status::Ok();
}

void Controller::FlushStore() { store_->Flush(); }

// --- Transitions ------------------------------------------------------------------------------

void Controller::SyncRowLocked(JobInfo& job) {
  job.row.epoch = epoch_;
  if (!job.in_core) return;
  const core::Job* cj = state_.FindJob(job.row.id);
  if (cj == nullptr) return;
  job.row.seq = cj->seq;
  job.row.enqueue_time = cj->admission.enqueue_time;
  job.row.policy = std::string(core::ToString(cj->admission.policy));
  job.row.bypass_count = cj->admission.bypass_count;
  job.row.first_blocked = cj->admission.first_blocked;
  job.row.gate_since = cj->admission.gate_since;
  job.row.start_seq = cj->start_seq;
}

void Controller::EmitLocked(const JobInfo& job) {
  if (listeners_.empty()) return;
  JobEvent event{.id = job.row.id, .state = job.row.state};
  if (!job.main_reason.empty() && (job.row.state == "PENDING" || job.row.state == "HELD")) {
    event.reason = job.main_reason;
  }
  for (auto& [id, listener] : listeners_) listener(event);
}

void Controller::SetStateLocked(JobInfo& job, const std::string& state, const std::string& why,
                                store::WriteBatch& batch) {
  if (job.row.state != state) {
    log_->info("job {}: {} -> {}{}{}", job.row.id, job.row.state, state, why.empty() ? "" : " ",
               why);
  }
  job.row.state = state;
  if (state != "PENDING" && state != "HELD") job.main_reason.clear();
  // Retention counts from when the end was recorded (a cancelled job's end_time is the
  // cancel; its kill may be reported much later).
  if (job.row.phase == kPhaseEnded) ended_by_time_.insert({Now(), job.row.id});
  SyncRowLocked(job);
  batch.jobs.push_back(job.row);
  EmitLocked(job);
}

void Controller::FinishLocked(JobInfo& job, int32_t exit_code, const std::string& cause,
                              bool killed, store::WriteBatch& batch) {
  const Instant now = Now();
  if (auto it = agents_.find(job.launch_host); it != agents_.end()) it->second->jobs.erase(job.row.id);
  job.row.exit_code = exit_code;
  job.row.end_time = job.row.end_time != 0 && job.row.cancel_requested ? job.row.end_time : now;
  job.row.phase = kPhaseEnded;  // the allocation stays in the row: where it ran
  job.ClearPreemption();
  MarkDirty();
  if (job.row.cancel_requested) {
    (void)state_.Cancel(job.row.id, now);
    SetStateLocked(job, "CANCELLED", killed ? "(killed)" : "(ended after cancel)", batch);
    return;
  }
  const core::ExitCause core_cause = CoreCause(cause, exit_code);
  Status s = state_.Finish(job.row.id, now, exit_code, core_cause);
  if (!s.ok()) log_->error("job {}: finish: {}", job.row.id, s.message());
  const bool done = cause.empty() && exit_code == 0;
  job.row.cause = done ? "" : (cause.empty() ? "NON_ZERO_EXIT" : cause);
  SetStateLocked(job, done ? "DONE" : "EXIT",
                 done ? "(exit 0)" : "(" + job.row.cause + ", exit " + std::to_string(exit_code) + ")",
                 batch);
}

void Controller::RequeueLocked(JobInfo& job, const std::string& why, store::WriteBatch& batch) {
  if (auto it = agents_.find(job.launch_host); it != agents_.end()) it->second->jobs.erase(job.row.id);
  job.ClearPreemption();
  MarkDirty();
  if (job.row.cancel_requested) {
    job.row.phase = kPhaseEnded;
    job.row.allocation.clear();
    (void)state_.Cancel(job.row.id, Now());
    SetStateLocked(job, "CANCELLED", "(never ran)", batch);
    return;
  }
  Status s = state_.Requeue(job.row.id);
  if (!s.ok()) log_->error("job {}: requeue: {}", job.row.id, s.message());
  job.row.phase = kPhasePending;
  job.row.allocation.clear();
  job.row.start_time = 0;
  job.hosts.clear();
  job.launch_host.clear();
  job.launch_ready = false;
  job.launch_sent_ms = -1;
  job.from_earlier_epoch = false;
  SetStateLocked(job, "PENDING", "(requeued at sequence " + std::to_string(job.row.seq) + ": " +
                                     why + ")",
                 batch);
}

void Controller::HostLossLocked(const std::string& host, store::WriteBatch& batch) {
  auto it = agents_.find(host);
  if (it == agents_.end()) return;
  const std::set<JobId> ids = it->second->jobs;
  log_->warn("host {}: lost (no heartbeat for lease + grace); {} jobs handled by on_host_loss",
             host, ids.size());
  for (JobId id : ids) {
    JobInfo* job = FindJobLocked(id);
    if (job == nullptr) continue;
    if (job->row.phase == kPhaseAdmitting) {
      RequeueLocked(*job, "host " + host + " lost before it reported the job", batch);
      continue;
    }
    LoseJobLocked(*job, "host " + host + " lost", batch);
  }
}

void Controller::ConfirmRunningLocked(JobInfo& job, const std::string& why,
                                      store::WriteBatch& batch) {
  job.row.phase = kPhaseAdmitted;
  job.from_earlier_epoch = false;
  if (job.row.cancel_requested) {
    batch.jobs.push_back(job.row);  // stays CANCELLED: its kill is on the way
  } else {
    SetStateLocked(job, "RUNNING", why, batch);
  }
}

void Controller::LoseJobLocked(JobInfo& job, const std::string& why, store::WriteBatch& batch) {
  const core::Job* cj = state_.FindJob(job.row.id);
  const bool requeue = cj != nullptr && !job.row.cancel_requested &&
                       state_.queues()[cj->queue].spec.on_host_loss == core::OnHostLoss::kRequeue;
  if (requeue) {
    RequeueLocked(job, why, batch);
  } else {
    FinishLocked(job, -1, "HOST_LOST", false, batch);
  }
}

Controller::JobInfo* Controller::FindJobLocked(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

// --- Hosts --------------------------------------------------------------------------------------

core::HostState Controller::EffectiveHostState(const std::string& host) const {
  auto agent = agents_.find(host);
  if (agent == agents_.end() || !agent->second->registered || agent->second->unavail) {
    return core::HostState::kUnavail;
  }
  if (admin_closed_hosts_.contains(host)) return core::HostState::kClosed;
  for (const core::HostSpec& spec : base_config_.hosts) {
    if (spec.name == host) return spec.state;
  }
  return core::HostState::kOk;
}

void Controller::SyncHostStateLocked(const std::string& host) {
  auto index = state_.FindHost(host);
  if (!index) return;
  const core::HostState want = EffectiveHostState(host);
  const core::HostState have = state_.hosts()[*index].spec.state;
  if (want == have) return;
  (void)state_.SetHostState(host, want);
  log_->info("host {}: {} -> {}", host, core::ToString(have), core::ToString(want));
  MarkDirty();
}

core::ClusterConfig Controller::EffectiveConfigLocked(const core::ClusterConfig& base) const {
  core::ClusterConfig config = base;
  for (core::HostSpec& spec : config.hosts) {
    const core::HostState configured = spec.state;
    auto agent = agents_.find(spec.name);
    if (agent == agents_.end() || !agent->second->registered || agent->second->unavail) {
      spec.state = core::HostState::kUnavail;
    } else if (admin_closed_hosts_.contains(spec.name)) {
      spec.state = core::HostState::kClosed;
    } else {
      spec.state = configured;
    }
  }
  for (const std::string& name : dynamic_hosts_) {
    const bool in_file = std::any_of(config.hosts.begin(), config.hosts.end(),
                                     [&](const core::HostSpec& s) { return s.name == name; });
    if (in_file) continue;
    auto index = state_.FindHost(name);
    if (!index) continue;
    config.hosts.push_back(state_.hosts()[*index].spec);
  }
  for (core::QueueSpec& q : config.queues) {
    if (auto it = queue_open_.find(q.name); it != queue_open_.end()) q.open = it->second;
    if (auto it = queue_active_.find(q.name); it != queue_active_.end()) q.active = it->second;
  }
  return config;
}

// --- The cycle ----------------------------------------------------------------------------------

void Controller::MarkDirty() {
  dirty_ = true;
  cycle_cv_.notify_all();
}

bool Controller::Reconciling() {
  for (const auto& [name, agent] : agents_) {
    for (JobId id : agent->jobs) {
      const JobInfo* job = FindJobLocked(id);
      if (job != nullptr && job->from_earlier_epoch && job->row.phase == kPhaseAdmitting) {
        return true;
      }
    }
  }
  return false;
}

// Steps: 1. nothing while earlier ADMITTING records are unresolved (R-SRV-2); 2. RunCycle
// with explanations and Commit; 3. one store batch: ADMITTING rows of started jobs, EXIT
// rows of unschedulable ones, the preemption markers of victims, reclaim deadlines and the
// admission records the cycle updated (the bypass increment commits with the StartJob that caused it,
// R-ADM-3); 4. log main reasons that changed; 5. after the commit, launches and preemption
// kills may go out.
void Controller::RunCycleLocked() {
  if (Reconciling()) return;
  const Instant now = Now();
  const auto t0 = std::chrono::steady_clock::now();
  const bool explain = last_explain_ms_ < 0 ||
                       NowMs() - last_explain_ms_ >= options_.explain_interval_ms;
  if (explain) last_explain_ms_ = NowMs();
  explain_due_ = !explain;
  core::CycleResult result = scheduler_.RunCycle(state_, now, core::CycleOptions{.explain = explain});
  core::Commit(result, now, state_);
  store::WriteBatch batch;
  std::set<JobId> touched;
  std::vector<JobId> started;
  std::vector<JobId> preempted;
  for (const core::Decision& d : result.decisions) {
    if (const auto* start = std::get_if<core::StartJob>(&d)) {
      JobInfo* job = FindJobLocked(start->job);
      if (job == nullptr) continue;
      job->hosts.clear();
      std::string hosts_text;
      for (const core::HostGrant& g : start->allocation.hosts) {
        job->hosts.emplace_back(state_.hosts()[g.host].spec.name, g.slots);
        hosts_text += (hosts_text.empty() ? "" : ",") + job->hosts.back().first + ":" +
                      std::to_string(g.slots);
      }
      job->launch_host = job->hosts.front().first;
      job->row.allocation = AllocationJson(start->allocation, state_).dump();
      job->row.phase = kPhaseAdmitting;
      job->row.start_time = now;
      job->launch_ready = false;
      job->launch_sent_ms = -1;
      job->reasons.reset();
      if (auto agent = agents_.find(job->launch_host); agent != agents_.end()) {
        agent->second->jobs.insert(job->row.id);
      }
      started.push_back(job->row.id);
      touched.erase(job->row.id);
      SetStateLocked(*job, "ADMITTING",
                     "on " + hosts_text + (start->backfilled ? " (backfilled)" : ""), batch);
      if (recording_) recorded_.push_back("start " + std::to_string(start->job) + " " + hosts_text +
                                          (start->backfilled ? " backfilled" : ""));
    } else if (const auto* fail = std::get_if<core::FailJob>(&d)) {
      JobInfo* job = FindJobLocked(fail->job);
      if (job == nullptr) continue;
      job->row.phase = kPhaseEnded;
      job->row.end_time = now;
      job->row.cause = std::string(core::ToString(fail->cause));
      job->message = fail->message;
      touched.erase(job->row.id);
      SetStateLocked(*job, "EXIT", "(" + job->row.cause + ": " + fail->message + ")", batch);
      if (recording_) recorded_.push_back("fail " + std::to_string(fail->job) + " " + job->row.cause);
    } else if (const auto* pend = std::get_if<core::PendJob>(&d)) {
      JobInfo* job = FindJobLocked(pend->job);
      if (job == nullptr) continue;
      job->reasons = pend->reasons;
      const std::string main(core::ToString(pend->reasons.main));
      if (main != job->main_reason) {
        // R-SRV-6: one line per change of the main reason, never one per cycle.
        log_->info("job {}: pending: {} ({})", job->row.id, main, core::Headline(pend->reasons.main));
        job->main_reason = main;
        EmitLocked(*job);
      }
      if (recording_) recorded_.push_back("pend " + std::to_string(pend->job) + " " + main);
    } else if (const auto* preempt = std::get_if<core::PreemptJob>(&d)) {
      JobInfo* job = FindJobLocked(preempt->victim);
      if (job == nullptr) continue;
      // The marker commits with the cycle's batch; the kill goes out after that (below).
      job->row.preempted_for = preempt->for_job;
      job->row.preempt_kill_at = preempt->kill_at;
      job->preempt_committed = false;
      SyncRowLocked(*job);
      batch.jobs.push_back(job->row);
      preempted.push_back(job->row.id);
      log_->info("job {}: preempted for job {} (SIGTERM now, SIGKILL after {} s)", job->row.id,
                 preempt->for_job, std::max<int64_t>(0, preempt->kill_at - now));
      if (recording_) recorded_.push_back("preempt " + std::to_string(preempt->victim) + " for " +
                                          std::to_string(preempt->for_job));
    } else if (const auto* reclaim = std::get_if<core::UpdateReclaim>(&d)) {
      // Committed with the cycle's batch, like the admission records.
      batch.settings[std::string(kSettingReclaimDeadline) + "/" +
                     state_.queues()[reclaim->queue].spec.name] = reclaim->deadline;
      if (recording_) {
        recorded_.push_back("reclaim " + state_.queues()[reclaim->queue].spec.name + " " +
                            std::to_string(reclaim->deadline.value_or(-1)));
      }
    } else if (const auto* update = std::get_if<core::UpdateAdmission>(&d)) {
      const core::Job* cj = state_.FindJob(update->job);
      if (cj != nullptr && (cj->state == core::JobState::kPending || cj->state == core::JobState::kHeld)) {
        touched.insert(update->job);
      }
      if (recording_) {
        recorded_.push_back("update " + std::to_string(update->job) + " bypass=" +
                            std::to_string(update->bypass_count) + " first_blocked=" +
                            std::to_string(update->first_blocked.value_or(-1)) + " gate_since=" +
                            std::to_string(update->gate_since.value_or(-1)));
      }
    }
  }
  for (JobId id : touched) {
    JobInfo* job = FindJobLocked(id);
    if (job == nullptr) continue;
    SyncRowLocked(*job);
    batch.jobs.push_back(job->row);
  }
  wake_at_ = result.wake_at;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  cycle_sum_ += seconds;
  ++cycle_count_;
  for (size_t i = 0; i < std::size(kCycleBuckets); ++i) {
    if (seconds <= kCycleBuckets[i]) ++cycle_buckets_[i];
  }
  if (batch.empty()) return;
  WriteLocked(std::move(batch), [this, started = std::move(started),
                                 preempted = std::move(preempted)] {
    for (JobId id : started) {
      JobInfo* job = FindJobLocked(id);
      if (job != nullptr && job->row.phase == kPhaseAdmitting) job->launch_ready = true;
    }
    for (JobId id : preempted) {  // their agents' long polls answer with the kills
      JobInfo* job = FindJobLocked(id);
      if (job != nullptr && job->BeingPreempted()) job->preempt_committed = true;
    }
  });
}

// Steps: an agent silent for the lease makes its host unavail; after lease + grace its jobs
// go by their queue's on_host_loss (the agent has killed them by then, R-SRV-3). An agent
// expected after a restart that never came back counts from the start.
void Controller::CheckLeasesLocked() {
  const int64_t now = NowMs();
  store::WriteBatch batch;
  for (auto& [name, agent] : agents_) {
    const int64_t silent = now - agent->last_heartbeat_ms;
    if (agent->registered && !agent->unavail && silent > options_.lease_ms) {
      agent->unavail = true;
      log_->warn("host {}: no heartbeat for {} ms: unavail", name, silent);
      SyncHostStateLocked(name);
    }
    if ((agent->unavail || !agent->registered) && !agent->loss_handled &&
        silent > options_.lease_ms + options_.host_loss_grace_ms) {
      agent->loss_handled = true;
      HostLossLocked(name, batch);
    }
  }
  if (!batch.empty()) WriteLocked(std::move(batch));
}

void Controller::ForgetEndedLocked() {
  if (options_.keep_ended_seconds < 0) return;
  const Instant cutoff = Now() - options_.keep_ended_seconds;
  while (!ended_by_time_.empty() && ended_by_time_.begin()->first <= cutoff) {
    const JobId id = ended_by_time_.begin()->second;
    ended_by_time_.erase(ended_by_time_.begin());
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second->row.phase != kPhaseEnded) continue;
    if (it->second->in_core) {
      Status s = state_.Forget(id);
      if (!s.ok()) log_->error("job {}: forget: {}", id, s.message());
    }
    jobs_.erase(it);
  }
}

void Controller::Tick() {
  std::lock_guard lock(mu_);
  CheckLeasesLocked();
  ForgetEndedLocked();
  if (dirty_ || (wake_at_ && Now() >= *wake_at_)) {
    dirty_ = false;
    RunCycleLocked();
  }
}

void Controller::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      cycle_cv_.wait_until(lock, deadline, [&] { return stopping_ || dirty_; });
      if (stopping_) break;
      if (dirty_) {
        // Debounce: let a burst of events arrive, then run one cycle for all of them.
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        lock.lock();
      }
      CheckLeasesLocked();
      ForgetEndedLocked();
      const bool explain_now =
          explain_due_ && NowMs() - last_explain_ms_ >= options_.explain_interval_ms;
      if (dirty_ || explain_now || (wake_at_ && Now() >= *wake_at_)) {
        dirty_ = false;
        RunCycleLocked();
      }
    }
  });
}

void Controller::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cycle_cv_.notify_all();
  work_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// --- Events and recording -------------------------------------------------------------------

int Controller::Subscribe(std::function<void(const JobEvent&)> listener) {
  std::lock_guard lock(mu_);
  const int id = next_listener_++;
  listeners_[id] = std::move(listener);
  return id;
}

void Controller::Unsubscribe(int id) {
  std::lock_guard lock(mu_);
  listeners_.erase(id);
}

void Controller::RecordDecisions(bool on) {
  std::lock_guard lock(mu_);
  recording_ = on;
}

std::vector<std::string> Controller::RecordedDecisions() {
  std::lock_guard lock(mu_);
  return recorded_;
}

}  // namespace sluice::server
