// The controller's user API (docs/api.md "Users"): submit, list, detail, cancel, hold,
// hosts, queues, limits, admin actions and reconfiguration.
#include <algorithm>
#include <sstream>

#include <spdlog/spdlog.h>

#include "config/cluster_yaml.h"
#include "core/admission/diagnostics.h"
#include "core/cycle/events.h"
#include "core/reasons/hint.h"
#include "server/controller.h"
#include "server/controller_internal.h"
#include "server/job_spec.h"
#include "server/job_text.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// R-SRV-5: users act on their own jobs only; administrators on every job.
std::optional<Reply> RefuseUnlessOwner(const Caller& caller, const Controller::JobInfo& job) {
  const std::string owner = job.spec.value("user", "");
  if (caller.admin || owner == caller.user) return std::nullopt;
  return Reply::Error(403, "job " + std::to_string(job.row.id) + " belongs to " + owner + "; " +
                               caller.user + " may act only on their own jobs");
}

json OptionalTime(const std::optional<Instant>& t) { return t ? json(*t) : json(nullptr); }

json ScopeJson(const core::LimitScope& scope) {
  if (!scope.set) return nullptr;
  return {{"per_each", scope.per_each}, {"names", scope.names}};
}

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

}  // namespace

JobListEntry Controller::ListEntryLocked(const JobInfo& job, bool with_reasons) const {
  const store::StoredJob& r = job.row;
  JobListEntry e{.fixed = job.fixed_text,
                 .id = r.id,
                 .user = job.spec.value("user", ""),
                 .queue = job.queue,
                 .state = r.state,
                 .submit_time = r.submit_time,
                 .start_time = r.start_time,
                 .end_time = r.end_time,
                 .exit_code = r.exit_code,
                 .cause = r.cause,
                 .hosts = job.hosts,
                 .dispatch_attempts = r.dispatch_attempts,
                 .message = job.message,
                 .with_reasons = with_reasons};
  for (const auto& [name, slots] : job.hosts) e.tasks += slots;
  if (e.tasks == 0) e.tasks = job.spec.value("max_tasks", 1);
  e.reason = job.WaitReason();
  if (with_reasons && !e.reason.empty()) {
    e.reasons = job.reasons;
    // What would let it start (R-PR-2), from the same reasons the JSON shows.
    const core::Job* cj = job.in_core ? state_.FindJob(r.id) : nullptr;
    if (cj != nullptr) {
      const core::PendingReasons unexplained{
          .main = r.state == "HELD" ? core::ReasonCode::kHeld : core::ReasonCode::kNewJob};
      e.hint = core::Hint(*cj, state_, job.reasons ? *job.reasons : unexplained);
    }
  }
  return e;
}

json Controller::JobJson(const JobInfo& job, bool detail) const {
  // One source of truth for the job object: the listing's text writer (job_text.h).
  JobListEntry entry = ListEntryLocked(job, detail);
  std::string text;
  AppendJobText(entry, text);
  json j = json::parse(text);
  if (!detail) return j;
  const store::StoredJob& r = job.row;
  const bool waiting = !entry.reason.empty();
  json admission = {{"policy", r.policy},
                    {"seq", r.seq},
                    {"bypass_count", r.bypass_count},
                    {"first_blocked", OptionalTime(r.first_blocked)},
                    {"gate_since", OptionalTime(r.gate_since)},
                    {"gate_active", r.gate_since.has_value()},
                    {"phase", r.phase},
                    {"epoch", r.epoch}};
  const core::Job* cj = job.in_core ? state_.FindJob(r.id) : nullptr;
  if (cj != nullptr) {
    core::AdmissionDiagnostics diag = core::Diagnose(*cj, state_, Now());
    admission["policy"] = core::ToString(diag.policy);
    admission["seq"] = diag.sequence;
    admission["pending_age"] = waiting ? json(diag.pending_age) : json(nullptr);
    admission["request"] = diag.request;
    admission["classification"] = core::ToString(diag.classification);
    admission["bypass_count"] = diag.bypass_count;
    admission["max_bypass"] = diag.max_bypass;
    admission["first_blocked"] = OptionalTime(diag.first_blocked);
    admission["max_head_wait"] = diag.max_head_wait;
    admission["gate"] = core::ToString(diag.gate);
    admission["gate_since"] = OptionalTime(diag.gate_since);
    admission["gate_active"] = diag.gate == core::GateState::kActive;
    admission["requested_slots"] = diag.requested_slots;
    admission["eligible_slots"] = diag.eligible_slots;
  }
  j["admission"] = admission;
  return j;
}

json Controller::HostJson(const core::Host& host) const {
  json agent = {{"connected", false}, {"last_heartbeat", nullptr}};
  if (auto it = agents_.find(host.spec.name); it != agents_.end() && it->second->registered) {
    agent = {{"connected", !it->second->unavail},
             {"last_heartbeat", it->second->last_heartbeat_ms / 1000}};
  }
  return {{"name", host.spec.name},
          {"state", core::ToString(host.spec.state)},
          {"slots", host.spec.slots},
          {"used_slots", host.used_slots},
          {"running_jobs", host.running_jobs},
          {"resources", host.spec.resources},
          {"attributes", host.spec.attributes},
          {"tags", host.spec.tags},
          {"agent", agent}};
}

json Controller::QueueJson(const core::Queue& queue) const {
  int64_t pending = 0;
  int64_t held = 0;
  for (const core::PendingEntry& e : queue.pending) {
    (e.job->state == core::JobState::kHeld ? held : pending) += 1;
  }
  const core::QueueSpec& q = queue.spec;
  return {{"name", q.name},
          {"priority", q.priority},
          {"policy", core::ToString(q.policy)},
          {"open", q.open},
          {"active", q.active},
          {"pending", pending},
          {"held", held},
          {"running", queue.running_jobs},
          {"used_slots", queue.used_slots},
          {"max_bypass", q.max_bypass},
          {"max_head_wait", q.max_head_wait},
          {"on_host_loss", core::ToString(q.on_host_loss)},
          {"submit_users", q.submit_users ? json(*q.submit_users) : json(nullptr)}};
}

Status Controller::CheckSubmittable(const Caller& caller, const json& spec,
                                    const std::string& where, bool& forbidden) {
  forbidden = false;
  const std::string queue_name = spec.value("queue", "");
  std::optional<QueueIndex> index;
  if (queue_name.empty()) {
    if (state_.queues().empty()) return InvalidArgument(where + ".queue: the cluster has no queue");
    index = state_.default_queue();
  } else {
    index = state_.FindQueue(queue_name);
    if (!index) return InvalidArgument(where + ".queue: no queue named '" + queue_name + "'");
  }
  const core::QueueSpec& q = state_.queues()[*index].spec;
  if (!q.open) return InvalidArgument(where + ".queue: queue '" + q.name + "' is closed");
  if (q.submit_users && !caller.admin &&
      std::find(q.submit_users->begin(), q.submit_users->end(), caller.user) ==
          q.submit_users->end()) {
    forbidden = true;
    return Status(StatusCode::kPermissionDenied,
                  where + ".queue: user " + caller.user + " may not submit to queue '" + q.name + "'");
  }
  const std::string resreq = spec.value("resreq", "");
  auto request =
      state_.CompileRequest(resreq.empty() ? q.default_resreq : resreq);
  if (!request) return request.error().WithPrefix(where + ".resreq");
  return Status::Ok();
}

Reply Controller::SubmitLocked(std::unique_lock<std::mutex>& lock, const Caller& caller,
                               std::vector<json> specs,
                               std::vector<std::shared_ptr<const std::string>> fixed, bool batch) {
  // 1. Check every job before accepting any (a batch is all or nothing).
  for (size_t i = 0; i < specs.size(); ++i) {
    bool forbidden = false;
    const std::string where = batch ? "jobs[" + std::to_string(i) + "]" : "job";
    Status s = CheckSubmittable(caller, specs[i], where, forbidden);
    if (!s.ok()) return Reply::Error(forbidden ? 403 : 400, s.message());
  }
  // 2. Ingest: the same path a restored job takes (parse, intern, fingerprint).
  const Instant now = Now();
  store::WriteBatch write;
  json ids = json::array();
  for (size_t i = 0; i < specs.size(); ++i) {
    json& spec = specs[i];
    const JobId id = next_id_++;
    spec["user"] = caller.user;
    spec["submit_time"] = now;
    Status s = core::Apply(core::JobSubmitted{ToCoreSpec(spec, id)}, now, state_);
    if (!s.ok()) {
      // All or nothing: the batch's jobs already taken in were never stored nor acknowledged,
      // so they leave the core and the table as if never submitted (their ids are not reused).
      for (auto taken = ids.rbegin(); taken != ids.rend(); ++taken) {
        Status withdrawn = state_.Withdraw(taken->get<JobId>());
        if (!withdrawn.ok()) log_->error("withdraw: {}", withdrawn.message());
        jobs_.erase(taken->get<JobId>());
      }
      return Reply::Error(400,
                          (batch ? "jobs[" + std::to_string(i) + "]: " : "job: ") + s.message());
    }
    const core::Job* cj = state_.FindJob(id);
    auto info = std::make_unique<JobInfo>();
    info->fixed_text = std::move(fixed[i]);
    info->in_core = true;
    info->queue = state_.queues()[cj->queue].spec.name;
    info->row = store::StoredJob{.id = id,
                                 .spec = spec.dump(),
                                 .state = cj->state == core::JobState::kHeld ? "HELD" : "PENDING",
                                 .submit_time = now,
                                 .phase = kPhasePending};
    info->spec = std::move(spec);  // moved, not copied: the batch's trees are not used again
    SyncRowLocked(*info);
    write.jobs.push_back(info->row);
    ids.push_back(id);
    jobs_[id] = std::move(info);
  }
  submissions_ += static_cast<int64_t>(specs.size());
  if (specs.size() == 1) {
    log_->info("job {}: submitted by {} to {}", ids[0].get<JobId>(), caller.user,
               jobs_[ids[0].get<JobId>()]->queue);
  } else if (!specs.empty()) {
    log_->info("jobs {}-{}: {} submitted by {}", ids.front().get<JobId>(), ids.back().get<JobId>(),
               specs.size(), caller.user);
  }
  MarkDirty();
  // 3. Acknowledge only after the commit (R-SRV-1).
  (void)WriteAndWait(lock, std::move(write));
  if (batch) return Reply{201, {{"ids", ids}}};
  return Reply{201, {{"id", ids[0]}}};
}

Reply Controller::Submit(const Caller& caller, const json& body) {
  Result<json> spec = ParseSubmission(body, "job");
  if (!spec) return Reply::Error(400, spec.error().message());
  std::vector<std::shared_ptr<const std::string>> fixed = {FixedJobText(*spec)};
  std::unique_lock lock(mu_);
  return SubmitLocked(lock, caller, {std::move(*spec)}, std::move(fixed), false);
}

Reply Controller::SubmitBatch(const Caller& caller, const json& body) {
  if (!body.is_object() || !body.contains("jobs") || !body["jobs"].is_array()) {
    return Reply::Error(400, "body: expected {\"jobs\": [job, ...]}");
  }
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (it.key() != "jobs") return Reply::Error(400, it.key() + ": unknown field");
  }
  const json& jobs = body["jobs"];
  if (jobs.size() > 100'000) return Reply::Error(413, "jobs: at most 100000 jobs per batch");
  std::vector<json> specs;
  std::vector<std::shared_ptr<const std::string>> fixed;
  specs.reserve(jobs.size());
  fixed.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    Result<json> spec = ParseSubmission(jobs[i], "jobs[" + std::to_string(i) + "]");
    if (!spec) return Reply::Error(400, spec.error().message());
    fixed.push_back(FixedJobText(*spec));
    specs.push_back(std::move(*spec));
  }
  std::unique_lock lock(mu_);
  return SubmitLocked(lock, caller, std::move(specs), std::move(fixed), true);
}

Reply Controller::ListJobs(const std::map<std::string, std::string>& query) {
  std::unique_lock lock(mu_);
  std::string user;
  std::string queue;
  std::vector<std::string> states;
  bool reasons = false;
  int64_t limit = -1;
  std::optional<JobFields> fields;
  for (const auto& [key, value] : query) {
    if (key == "user") {
      user = value == "all" ? "" : value;
    } else if (key == "queue") {
      queue = value;
    } else if (key == "state") {
      states = SplitComma(value);
      for (std::string& s : states) std::transform(s.begin(), s.end(), s.begin(), ::toupper);
    } else if (key == "pending_reasons") {
      reasons = value == "1" || value == "true";
    } else if (key == "fields") {
      fields.emplace();
      for (const std::string& name : SplitComma(value)) {
        const std::vector<std::string>& known = JobFieldNames();
        if (std::find(known.begin(), known.end(), name) == known.end()) {
          return Reply::Error(400, "fields: no job field '" + name + "'");
        }
        fields->insert(name);
      }
    } else if (key == "limit") {
      try {
        limit = std::stoll(value);
      } catch (...) {
        return Reply::Error(400, "limit: expected an integer, got '" + value + "'");
      }
    } else {
      return Reply::Error(400, key + ": unknown query parameter");
    }
  }
  // Under the lock only the filter and copies of the selected jobs' changing fields, a chunk
  // at a time (the lock is released between chunks, so a listing of a million jobs never
  // holds up heartbeats or the cycle for long); the text is written without the lock
  // (job_text.h). `selected` shares the jobs, so they stay valid across releases even if
  // ForgetEndedLocked drops them meanwhile; a job whose state left the filter is skipped. A listing is
  // therefore not one atomic snapshot, as squeue's is not.
  const auto matches = [&](const JobInfo& job) {
    if (!user.empty() && job.spec.value("user", "") != user) return false;
    if (!queue.empty() && job.queue != queue) return false;
    return states.empty() || std::find(states.begin(), states.end(), job.row.state) != states.end();
  };
  std::vector<std::shared_ptr<const JobInfo>> selected;
  for (const auto& [id, job] : jobs_) {
    if (matches(*job)) selected.push_back(job);
  }
  size_t first = 0;
  if (limit >= 0 && selected.size() > static_cast<size_t>(limit)) first = selected.size() - limit;
  Reply reply{.status = 200, .body = nullptr};
  std::string& text = reply.text;
  text += '[';
  constexpr size_t kChunk = 4096;
  std::vector<JobListEntry> entries;
  entries.reserve(std::min(kChunk, selected.size()));
  bool first_job = true;
  for (size_t at = first; at < selected.size(); at += kChunk) {
    if (!lock.owns_lock()) lock.lock();
    entries.clear();
    for (size_t i = at; i < std::min(at + kChunk, selected.size()); ++i) {
      if (matches(*selected[i])) entries.push_back(ListEntryLocked(*selected[i], reasons));
    }
    lock.unlock();
    if (at == first) text.reserve((selected.size() - first) * (fields ? 200 : 640) + 2);
    for (const JobListEntry& entry : entries) {
      if (!first_job) text += ',';
      first_job = false;
      AppendJobText(entry, text, fields ? &*fields : nullptr);
    }
  }
  text += ']';
  return reply;
}

Reply Controller::GetJob(JobId id) {
  std::lock_guard lock(mu_);
  JobInfo* job = FindJobLocked(id);
  if (job == nullptr && state_.Knows(id)) {
    return Reply::Error(404, "job " + std::to_string(id) + " ended more than " +
                                 std::to_string(options_.keep_ended_seconds) +
                                 " s ago and is no longer kept (keep_ended_seconds)");
  }
  if (job == nullptr) return Reply::Error(404, "no job " + std::to_string(id));
  return Reply{200, JobJson(*job, true)};
}

Reply Controller::Cancel(const Caller& caller, JobId id) {
  std::unique_lock lock(mu_);
  JobInfo* job = FindJobLocked(id);
  if (job == nullptr) return Reply::Error(404, "no job " + std::to_string(id));
  if (std::optional<Reply> refused = RefuseUnlessOwner(caller, *job)) return *refused;
  store::WriteBatch batch;
  const std::string& state = job->row.state;
  if (state == "PENDING" || state == "HELD") {
    (void)state_.Cancel(id, Now());
    job->row.phase = kPhaseEnded;
    job->row.end_time = Now();
    SetStateLocked(*job, "CANCELLED", "(by " + caller.user + ")", batch);
    MarkDirty();
  } else if (state == "ADMITTING" || state == "RUNNING") {
    job->row.cancel_requested = true;
    job->row.end_time = Now();
    if (state == "ADMITTING" && job->launch_sent_ms < 0 && !job->from_earlier_epoch) {
      // Never sent to an agent: release at once.
      FinishLocked(*job, 0, "", false, batch);
    } else {
      // The agent kills it (R-SRV-2: a cancel during ADMITTING kills it if it launches);
      // its slots are released when the agent reports the kill or the host is lost.
      SetStateLocked(*job, "CANCELLED", "(by " + caller.user + "; killing)", batch);
      work_cv_.notify_all();
    }
  } else {
    return Reply::Error(409, "job " + std::to_string(id) + " is already " + state);
  }
  // The job as the action left it, taken before the lock is released for the commit.
  Reply reply{200, JobJson(*job, false)};
  (void)WriteAndWait(lock, std::move(batch));
  return reply;
}

Reply Controller::Hold(const Caller& caller, JobId id, bool held) {
  std::unique_lock lock(mu_);
  JobInfo* job = FindJobLocked(id);
  if (job == nullptr) return Reply::Error(404, "no job " + std::to_string(id));
  if (std::optional<Reply> refused = RefuseUnlessOwner(caller, *job)) return *refused;
  Status s = job->in_core ? state_.SetHeld(id, held) : FailedPrecondition("ended");
  if (!s.ok()) {
    return Reply::Error(
        409, "job " + std::to_string(id) + " is " + job->row.state + "; " +
                 (held ? "only PENDING jobs can be held" : "only HELD jobs can be released"));
  }
  store::WriteBatch batch;
  SetStateLocked(*job, held ? "HELD" : "PENDING", "(by " + caller.user + ")", batch);
  MarkDirty();
  // The job as the action left it, taken before the lock is released for the commit.
  Reply reply{200, JobJson(*job, false)};
  (void)WriteAndWait(lock, std::move(batch));
  return reply;
}

Reply Controller::Hosts() {
  std::lock_guard lock(mu_);
  json out = json::array();
  for (const core::Host& host : state_.hosts()) out.push_back(HostJson(host));
  return Reply{200, out};
}

Reply Controller::Queues() {
  std::lock_guard lock(mu_);
  json out = json::array();
  for (const core::Queue& queue : state_.queues()) out.push_back(QueueJson(queue));
  return Reply{200, out};
}

Reply Controller::Limits() {
  std::lock_guard lock(mu_);
  json out = json::array();
  for (const core::LimitSpec& l : state_.config().limits) {
    out.push_back({{"name", l.name},
                   {"slots", l.slots ? json(*l.slots) : json(nullptr)},
                   {"jobs", l.jobs ? json(*l.jobs) : json(nullptr)},
                   {"resources", l.resources},
                   {"users", ScopeJson(l.users)},
                   {"queues", ScopeJson(l.queues)},
                   {"hosts", ScopeJson(l.hosts)},
                   {"projects", ScopeJson(l.projects)}});
  }
  return Reply{200, out};
}

Reply Controller::QueueAction(const Caller& caller, const std::string& queue,
                              const std::string& action) {
  if (!caller.admin) return Reply::Error(403, caller.user + " is not an administrator");
  std::unique_lock lock(mu_);
  auto index = state_.FindQueue(queue);
  if (!index) return Reply::Error(404, "no queue named '" + queue + "'");
  store::WriteBatch batch;
  const auto saved_open = queue_open_;
  const auto saved_active = queue_active_;
  if (action == "open" || action == "close") {
    queue_open_[queue] = action == "open";
    batch.settings[std::string(kSettingQueueOpen) + "/" + queue] = action == "open" ? 1 : 0;
  } else if (action == "activate" || action == "inactivate") {
    queue_active_[queue] = action == "activate";
    batch.settings[std::string(kSettingQueueActive) + "/" + queue] = action == "activate" ? 1 : 0;
  } else {
    return Reply::Error(404, "no queue action '" + action + "'");
  }
  Status s = state_.Reconfigure(EffectiveConfigLocked(base_config_));
  if (!s.ok()) {  // nothing changed: neither stored nor kept in memory
    queue_open_ = saved_open;
    queue_active_ = saved_active;
    return Reply::Error(409, s.message());
  }
  log_->info("queue {}: {} by {}", queue, action, caller.user);
  MarkDirty();
  // Answered once it is stored: a restart keeps it.
  Reply reply{200, QueueJson(state_.queues()[*index])};
  (void)WriteAndWait(lock, std::move(batch));
  return reply;
}

Reply Controller::HostAction(const Caller& caller, const std::string& host,
                             const std::string& action) {
  if (!caller.admin) return Reply::Error(403, caller.user + " is not an administrator");
  std::unique_lock lock(mu_);
  auto index = state_.FindHost(host);
  if (!index) return Reply::Error(404, "no host named '" + host + "'");
  store::WriteBatch batch;
  const std::string key = std::string(kSettingHostClosed) + "/" + host;
  if (action == "open") {
    admin_closed_hosts_.erase(host);
    batch.settings[key] = std::nullopt;
  } else if (action == "close") {
    admin_closed_hosts_.insert(host);
    batch.settings[key] = 1;
  } else {
    return Reply::Error(404, "no host action '" + action + "'");
  }
  log_->info("host {}: {} by {}", host, action, caller.user);
  SyncHostStateLocked(host);
  Reply reply{200, HostJson(state_.hosts()[*index])};
  (void)WriteAndWait(lock, std::move(batch));
  return reply;
}

Reply Controller::Reconfigure() {
  config::AuthConfig auth;
  Result<core::ClusterConfig> config = config::LoadClusterConfig(options_.config_path, &auth);
  if (!config) {
    log_->error("reconfigure refused: {}", config.error().message());
    return Reply::Error(400, config.error().message());
  }
  Reply reply = Reconfigure(std::move(*config));
  if (reply.status == 200) {
    std::lock_guard lock(mu_);
    auth_ = std::move(auth);
  }
  return reply;
}

Reply Controller::Reconfigure(core::ClusterConfig config) {
  std::unique_lock lock(mu_);
  // R-SRV-4b: validated whole (the core refuses to remove a queue or host with jobs and
  // changes nothing then); every pending job is classified again.
  Status s = state_.Reconfigure(EffectiveConfigLocked(config));
  if (!s.ok()) {
    log_->error("reconfigure refused: {}", s.message());
    return Reply::Error(400, s.message());
  }
  base_config_ = std::move(config);
  ++config_version_;
  log_->info("configuration version {} in force", config_version_);
  MarkDirty();
  (void)WriteAndWait(lock, store::WriteBatch{.config_version = config_version_});
  return Reply{200, {{"config_version", config_version_}}};
}

bool Controller::Authenticate(const std::string& token, Caller& caller, bool& agent) const {
  std::lock_guard lock(mu_);
  agent = false;
  if (token.empty()) return false;
  if (!auth_.agent_token.empty() && token == auth_.agent_token) {
    agent = true;
    return true;
  }
  for (const config::AuthUser& u : auth_.users) {
    if (u.token == token) {
      caller = Caller{.user = u.name, .admin = u.admin};
      return true;
    }
  }
  return false;
}

}  // namespace sluice::server
