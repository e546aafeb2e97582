#include "server/job_changes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

#include "base/array_ids.h"
#include "core/cycle/scheduler.h"
#include "core/model/dependency.h"
#include "server/controller.h"
#include "server/fixed_text_pool.h"
#include "server/job_environment.h"
#include "server/job_events.h"
#include "server/job_identity.h"
#include "server/job_spec.h"
#include "wire/job_json.h"
#include "server/views.h"
#include "store/history.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// The members PATCH /v1/jobs/{id} may change.
const std::set<std::string>& Changeable() {
  static const std::set<std::string> kFields = {"name",      "queue",   "tasks",     "min_tasks",
                                                "max_tasks", "resreq",  "run_limit", "begin",
                                                "depend",    "priority"};
  return kFields;
}

// The members of a submission (ParseSubmission knows them; the rest of a stored spec, such as
// user and submit_time, is kept aside and put back).
const std::set<std::string>& SubmissionFields() {
  static const std::set<std::string> kFields = {
      "command",  "name",      "queue", "tasks",  "min_tasks", "max_tasks",
      "resreq",   "run_limit", "begin", "depend", "exclusive", "hold",
      "priority", "project",   "cwd",   "output", "error",     "env"};
  return kFields;
}

// The body over the stored spec, checked as a submission; errors name `job.<field>`.
Result<json> MergedSpec(const json& stored, const json& body) {
  if (!body.is_object() || body.empty()) {
    return InvalidArgument("job: expected an object with the fields to change");
  }
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (!Changeable().contains(it.key())) {
      return InvalidArgument("job." + it.key() +
                             ": cannot be modified (name, queue, tasks, min_tasks, max_tasks, "
                             "resreq, run_limit, begin, depend, priority can)");
    }
  }
  json base = json::object();
  json kept = json::object();
  for (auto it = stored.begin(); it != stored.end(); ++it) {
    (SubmissionFields().contains(it.key()) ? base : kept)[it.key()] = it.value();
  }
  if (body.contains("tasks") || body.contains("min_tasks") || body.contains("max_tasks")) {
    base.erase("tasks");
    base.erase("min_tasks");
    base.erase("max_tasks");
  }
  for (auto it = body.begin(); it != body.end(); ++it) base[it.key()] = it.value();
  Result<json> parsed = ParseSubmission(base, "job");
  if (!parsed) return parsed.error();
  for (auto it = kept.begin(); it != kept.end(); ++it) (*parsed)[it.key()] = it.value();
  return parsed;
}

// "queue normal -> short, run_limit 600 -> 1200" for the log.
std::string Changes(const json& before, const json& after) {
  std::string text;
  for (const std::string& key : Changeable()) {
    const json old_value = before.value(key, json());
    const json new_value = after.value(key, json());
    if (old_value == new_value) continue;
    text += (text.empty() ? "" : ", ") + key + " " + old_value.dump() + " -> " + new_value.dump();
  }
  return text.empty() ? "nothing changed" : text;
}

// Array elements (R-UX-3) are not changed one by one (core's job_changes.cc refuses too).
Status NotArrayElement(JobId id, const char* verb) {
  return FailedPrecondition("job " + FormatJobId(id) + " is an element of array " +
                            std::to_string(ArrayIdOf(id)) + "; array elements cannot be " + verb);
}

Refusal Unprocessable(JobId id, const std::string& cause) {
  return Refusal{.kind = RefusalKind::kNotModified,
                 .message = "job " + std::to_string(id) + " not modified: " + cause,
                 .cause = cause};
}

}  // namespace

Outcome<json> JobChanges::Answer(Lock& lock, JobInfo& job, store::WriteBatch batch) {
  json answer = JobJson(job, book_, ctx_.state(), ctx_.Now(), false);
  // Answered once stored; a write the store could not take (kUnavailable, HA) is resynced
  // from memory later (context.h) and answered 503, as Controller::AnswerAfterCommit does.
  if (!batch.empty()) {
    if (Status s = ctx_.writes().WriteAndWait(lock, std::move(batch)); !s.ok()) return s;
  }
  return answer;
}

// --- Modify -------------------------------------------------------------------------------------

Outcome<json> JobChanges::Modify(Lock& lock, const Caller& caller, JobId id, const json& body,
                                 const config::JobPolicy& policy) {
  if (IsArrayElement(id)) return NotArrayElement(id, "modified");
  JobInfo* job = book_.Find(id);
  if (job == nullptr) return NotFound("no job " + std::to_string(id));
  Status owner = RefuseUnlessOwner(caller, job->user, id);
  if (!owner.ok()) return owner;
  const json stored = book_.Spec(*job);
  if (!stored.is_object()) return SpecUnreadable(id);
  Result<json> spec = MergedSpec(stored, body);
  if (!spec) return spec.error();
  if (body.contains("output")) spec->erase("output_default");  // named now, or defaulted again
  (void)ApplyJobPolicy(policy, *spec);
  const JobState state = job->state();
  if (IsWaiting(state)) return ModifyWaiting(lock, caller, *job, std::move(*spec));
  if ((state == JobState::kRunning || state == JobState::kAdmitting) && job->HoldsAllocation() &&
      !job->row.cancel_requested) {
    if (body.size() != 1 || !body.contains("run_limit")) {
      return FailedPrecondition("job " + std::to_string(id) + " is " + job->StateText() +
                                           "; only its run_limit may change (administrators)");
    }
    return ModifyRunning(lock, caller, *job, *spec);
  }
  return FailedPrecondition("job " + std::to_string(id) + " is " + job->StateText() +
                                       "; only PENDING and HELD jobs can be modified");
}

Outcome<json> JobChanges::ModifyRunning(Lock& lock, const Caller& caller, JobInfo& job, const json& spec) {
  if (!caller.admin) {
    return Status(StatusCode::kPermissionDenied,
                             caller.user + " is not an administrator: only administrators may "
                                           "change a running job's run limit");
  }
  std::optional<Duration> limit;
  if (spec["run_limit"].is_number_integer()) limit = spec["run_limit"].get<int64_t>();
  const JobId id = job.row.id;
  // Read before the core changes: a spec that cannot be read now changes nothing.
  const json before = book_.Spec(job);
  if (!before.is_object()) return SpecUnreadable(id);
  Status applied = ctx_.ApplyLocked(core::RunLimitChanged{id, limit}, "");
  if (!applied.ok()) return FailedPrecondition(applied.message());
  const std::string changes = Changes(before, spec);
  ctx_.log().info("job {}: modified by {}: {}", id, caller.user, changes);
  AppendJobEvent(job.row, {{"event", "modify"},
                           {"time", ctx_.Now()},
                           {"by", caller.user},
                           {"changes", changes}});
  job.SetSpec(spec);
  job.fixed_text = SharedFixedText(spec);
  job.run_limit_pending = true;  // TakeRunLimitOrders tells its agent
  book_.NoteRunLimitOrder(job);
  ctx_.wakeups().Mark(job.launch().launch_host);  // a batched poll answers with it at once
  ctx_.cycle().MarkDirty();
  store::WriteBatch batch;
  book_.Stage(job, batch);
  book_.Emit(job);
  return Answer(lock, job, std::move(batch));
}

// Steps 2-4 of Modify for a PENDING/HELD job (job_changes.h).
Outcome<json> JobChanges::ModifyWaiting(Lock& lock, const Caller& caller, JobInfo& job, json spec) {
  const JobId id = job.row.id;
  // Read before the core changes: a spec that cannot be read now changes nothing.
  const json before = book_.Spec(job);
  if (!before.is_object()) return SpecUnreadable(id);
  const core::ClusterState& cs = ctx_.state();
  const std::string queue_name = spec.value("queue", "");
  const std::optional<QueueIndex> queue =
      queue_name.empty() ? std::optional<QueueIndex>(cs.topology().default_queue()) : cs.topology().FindQueue(queue_name);
  if (!queue) return InvalidArgument("job.queue: no queue named '" + queue_name + "'");
  const core::QueueSpec& q = cs.topology().queues()[*queue].spec;
  const bool moves = q.name != job.queue;
  if (moves && q.submit_users && !caller.admin &&
      std::find(q.submit_users->begin(), q.submit_users->end(), caller.user) ==
          q.submit_users->end()) {
    return 
        Status(StatusCode::kPermissionDenied,
               "job.queue: user " + caller.user + " may not submit to queue '" + q.name + "'");
  }
  if (moves && !q.open) return Unprocessable(id, "queue '" + q.name + "' is closed");
  const core::JobSpec core_spec = ToCoreSpec(spec, id);
  if (!core_spec.depend.empty()) {
    Result<core::Dependency> dependency = core::Dependency::Parse(core_spec.depend);
    if (!dependency)
      return InvalidArgument("job.depend: " + dependency.error().message());
    for (JobId named : dependency->jobs()) {
      if (!cs.Knows(named)) {
        return InvalidArgument("job.depend: no job " + std::to_string(named));
      }
    }
    const std::vector<JobId> cycle = cs.dependencies().CycleThrough(id, *dependency);
    if (!cycle.empty()) {
      std::string path;
      for (JobId step : cycle) path += (path.empty() ? "" : " -> ") + FormatJobId(step);
      return InvalidArgument("job.depend: " + core_spec.depend +
                             " would make the job wait for itself (" + path + ")");
    }
  }
  Result<core::Job> candidate = ctx_.memoizing_state().Candidate(core_spec);
  if (!candidate) return InvalidArgument(candidate.error().message());
  if (std::optional<std::string> never = core::Scheduler().NeverRuns(*candidate, cs)) {
    ctx_.log().info("job {}: modify by {} refused: {}", id, caller.user, *never);
    return Unprocessable(id, *never);
  }
  Status applied = ctx_.ApplyLocked(core::JobModified{core_spec}, "job " + std::to_string(id));
  if (!applied.ok()) return InvalidArgument(applied.message());
  const std::string changes = Changes(before, spec);
  ctx_.log().info("job {}: modified by {}: {}{}", id, caller.user, changes,
                 moves ? " (to the end of queue " + q.name + ")" : "");
  AppendJobEvent(job.row, {{"event", "modify"},
                           {"time", ctx_.Now()},
                           {"by", caller.user},
                           {"changes", changes}});
  job.SetSpec(spec);
  job.fixed_text = SharedFixedText(spec);
  job.queue = InternedText(cs.topology().queues()[cs.FindJob(id)->queue].spec.name);
  job.ClearReasons();
  job.main_reason.clear();
  book_.NoteNotEstimated(job);
  ctx_.cycle().MarkDirty();
  store::WriteBatch batch;
  book_.Stage(job, batch);
  book_.Emit(job);
  return Answer(lock, job, std::move(batch));
}

// --- Requeue ------------------------------------------------------------------------------------

Outcome<json> JobChanges::Requeue(Lock& lock, const Caller& caller, JobId id) {
  if (IsArrayElement(id)) return NotArrayElement(id, "requeued");
  JobInfo* job = book_.Find(id);
  if (job == nullptr) return RequeueEnded(lock, caller, id, nullptr);
  Status owner = RefuseUnlessOwner(caller, job->user, id);
  if (!owner.ok()) return owner;
  if (job->phase() == core::AdmissionPhase::kEnded) return RequeueEnded(lock, caller, id, job);
  if (!job->HoldsAllocation() || job->row.cancel_requested) {
    return FailedPrecondition("job " + std::to_string(id) + " is " + job->StateText() +
                                         "; only running and ended jobs can be requeued");
  }
  store::WriteBatch batch;
  if (job->phase() == core::AdmissionPhase::kAdmitting && job->launch().launch_sent_ms < 0 &&
      !job->from_earlier_epoch) {
    book_.Requeue(*job, "by " + caller.user, batch);  // never sent to an agent
  } else if (!job->requeue_requested) {
    job->requeue_requested = true;
    job->mutable_launch().requeue_by = caller.user;
    ctx_.log().info("job {}: requeue by {}: killing it", id, caller.user);
    // A batched poll looks at once (agent_batch.cc).
    ctx_.wakeups().Mark(job->launch().launch_host);
  }
  return Answer(lock, *job, std::move(batch));
}

Outcome<json> JobChanges::RequeueEnded(Lock& lock, const Caller& caller, JobId id, JobInfo* job) {
  store::StoredJob row;
  if (job != nullptr) {
    row = book_.StoredWithSpec(*job);
  } else {
    // Not in memory: its row in the store's history (it ended before the retention).
    store::HistoryQuery query{.id = id, .limit = 1};
    lock.unlock();
    Result<store::HistoryPage> page = ctx_.writes().store().QueryHistory(query);
    lock.lock();
    if (!page) return page.error();
    if (page->records.empty()) return NotFound("no job " + std::to_string(id));
    row = page->records.front().row;
    job = book_.Find(id);  // it may have come back while the lock was released
    if (job != nullptr && job->phase() != core::AdmissionPhase::kEnded) {
      return FailedPrecondition("job " + std::to_string(id) + " is " + job->StateText());
    }
  }
  if (row.spec.empty()) return SpecUnreadable(id);
  json spec = json::parse(row.spec, nullptr, false);
  if (!spec.is_object()) return Internal("job " + std::to_string(id) + ": bad spec");
  Status owner = RefuseUnlessOwner(caller, spec.value("user", ""), id);
  if (!owner.ok()) return owner;
  core::JobSpec core_spec = ToCoreSpec(spec, id);
  core_spec.hold = false;
  Status revived = ctx_.ApplyLocked(core::JobRevived{core_spec, row.seq}, "");
  if (!revived.ok()) return FailedPrecondition(revived.message());
  if (job == nullptr) {
    auto info = std::make_shared<JobInfo>();
    info->row = JobRow::From(store::StoredJob(row));  // a copy: `row` is read below
    info->AdoptSpec(spec);
    info->fixed_text = SharedFixedText(spec);
    job = info.get();
    book_.Add(std::move(info));
  }
  // Its row is written whole again (an upsert): the store may have deleted it meanwhile (the
  // history's retention), and a row written without its spec is only an update.
  if (job->row.spec.empty()) job->row.spec = SparseText(std::string(row.spec));
  const core::ClusterState& cs = ctx_.state();
  job->in_core = true;
  job->queue = InternedText(cs.topology().queues()[cs.FindJob(id)->queue].spec.name);
  NoteRequeue(job->row, row.state, ctx_.Now(), "by " + caller.user);
  job->row.start_time = job->row.end_time = 0;
  job->row.exit_code.reset();
  job->row.cause.clear();
  job->row.allocation.clear();
  job->row.dispatch_attempts = 0;
  job->row.cancel_requested = false;
  job->ClearPreemption();
  job->EndLaunch();
  job->launch_ready = false;
  job->message.clear();
  job->ClearReasons();
  book_.NoteNotEstimated(*job);
  job->requeue_requested = false;
  job->SetPhase(core::AdmissionPhase::kPending);
  ctx_.cycle().MarkDirty();
  store::WriteBatch batch;
  book_.SetState(*job, JobState::kPending,
                 "(requeued by " + caller.user + " at sequence " + std::to_string(row.seq) + ")",
                 batch);
  return Answer(lock, *job, std::move(batch));
}

json TakeRunLimitOrders(JobBook& book, const std::string& host) {
  json orders = json::array();
  if (!book.TakeRunLimitHost(host)) return orders;  // no order noted for it: no walk
  for (JobId id : book.LaunchedBy(host)) {
    JobInfo* job = book.Find(id);
    if (job == nullptr || !job->run_limit_pending) continue;
    job->run_limit_pending = false;
    orders.push_back({{"job", id}, {"run_limit", book.RunLimitOf(*job)}});
  }
  return orders;
}

// --- Controller's routes ------------------------------------------------------------------------

Outcome<json> Controller::Modify(const Caller& caller, JobId id, const json& body) {
  MutexLock lock(ctx_.mu());
  return changes_.Modify(lock, caller, id, body, settings_.auth().jobs);
}

Outcome<json> Controller::Requeue(const Caller& caller, JobId id) {
  MutexLock lock(ctx_.mu());
  return changes_.Requeue(lock, caller, id);
}

}  // namespace sluice::server
