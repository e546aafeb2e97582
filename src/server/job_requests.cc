#include "server/job_requests.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <limits>

#include "base/array_ids.h"
#include "server/job_arrays.h"
#include "server/job_events.h"
#include "server/job_identity.h"
#include "server/job_spec.h"
#include "server/pending_quota.h"
#include "wire/job_json.h"
#include "server/text_parsers.h"
#include "server/views.h"

namespace sluice::server {

using nlohmann::json;

namespace {

Status RefuseUnlessOwner(const Caller& caller, const JobInfo& job) {
  return server::RefuseUnlessOwner(caller, job.user, job.row.id);
}

Status NoJob(JobId id) { return NotFound("no job " + std::to_string(id)); }

}  // namespace

// --- Submit -------------------------------------------------------------------------------------

Result<std::vector<json>> JobRequests::ParseBatch(const json& body) {
  if (!body.is_object() || !body.contains("jobs") || !body["jobs"].is_array()) {
    return InvalidArgument("body: expected {\"jobs\": [job, ...]}");
  }
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (it.key() != "jobs") return InvalidArgument(it.key() + ": unknown field");
  }
  const json& jobs = body["jobs"];
  if (jobs.size() > 100'000) {
    return Status(StatusCode::kResourceExhausted, "jobs: at most 100000 jobs per batch");
  }
  std::vector<json> specs;
  specs.reserve(jobs.size());
  int64_t elements = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    Result<json> spec = ParseSubmission(jobs[i], "jobs[" + std::to_string(i) + "]");
    if (!spec) return spec.error();
    // Issue 48: 1,000 arrays of a million elements in one request took the server to 10 GB.
    elements += JobsOf(*spec);
    if (elements > kMaxElementsPerRequest) {
      return Status(StatusCode::kResourceExhausted,
                    "jobs[" + std::to_string(i) + "]: the request adds more than " +
                        std::to_string(kMaxElementsPerRequest) +
                        " jobs and array elements; split it");
    }
    specs.push_back(std::move(*spec));
  }
  return specs;
}

Status JobRequests::CheckSubmittable(const Caller& caller, const json& spec,
                                     const std::string& where) {
  const core::ClusterState& cs = ctx_.state();
  const std::string queue_name = spec.value("queue", "");
  std::optional<QueueIndex> index;
  if (queue_name.empty()) {
    if (cs.topology().queues().empty())
      return InvalidArgument(where + ".queue: the cluster has no queue");
    index = cs.topology().default_queue();
  } else {
    index = cs.topology().FindQueue(queue_name);
    if (!index) return InvalidArgument(where + ".queue: no queue named '" + queue_name + "'");
  }
  const core::QueueSpec& q = cs.topology().queues()[*index].spec;
  if (!q.open) return InvalidArgument(where + ".queue: queue '" + q.name + "' is closed");
  if (q.submit_users && !caller.admin &&
      std::find(q.submit_users->begin(), q.submit_users->end(), caller.user) ==
          q.submit_users->end()) {
    return Status(StatusCode::kPermissionDenied, where + ".queue: user " + caller.user +
                                                     " may not submit to queue '" + q.name + "'");
  }
  const std::string resreq = spec.value("resreq", "");
  auto request = ctx_.memoizing_state().CompileRequest(resreq.empty() ? q.default_resreq : resreq);
  if (!request) return InvalidArgument(request.error().WithPrefix(where + ".resreq").message());
  if (const std::string rsv = spec.value("reservation", ""); !rsv.empty() && reservation_check_) {
    return reservation_check_(caller, rsv, where);  // R-RSV-2: its users and groups only
  }
  return Status::Ok();
}

Status JobRequests::Ingest(const Caller& caller, json spec,
                           std::shared_ptr<const std::string> fixed, Instant now,
                           store::WriteBatch& write, JobId& id) {
  id = book_.TakeId();
  spec["user"] = caller.user;
  if (!caller.account.empty()) spec["account"] = caller.account;  // R-SEC-1
  spec["submit_time"] = now;
  if (spec.contains("array")) return IngestArray(std::move(spec), std::move(fixed), now, write, id);
  SLUICE_RETURN_IF_ERROR(ctx_.ApplyLocked(core::JobSubmitted{ToCoreSpec(spec, id)}, ""));
  const core::Job* cj = ctx_.state().FindJob(id);
  auto info = std::make_shared<JobInfo>();
  info->fixed_text = std::move(fixed);
  info->in_core = true;
  info->queue = InternedText(ctx_.state().topology().queues()[cj->queue].spec.name);
  info->row = JobRow{.id = id, .spec = SparseText(spec.dump()), .submit_time = now};
  info->SetState(cj->state == core::JobState::kHeld ? JobState::kHeld : JobState::kPending);
  info->SetPhase(core::AdmissionPhase::kPending);
  info->AdoptSpec(spec);  // the tree itself is not kept (issue 45)
  book_.Stage(*info, write);
  book_.Add(std::move(info));
  return Status::Ok();
}

// Steps: 1. check every job before accepting any (a batch is all or nothing); 2. ingest,
// the same path a restored job takes (parse, intern, fingerprint); 3. acknowledge only
// after the commit (R-SRV-1).
Result<json> JobRequests::Submit(Lock& lock, const Caller& caller, std::vector<json> specs,
                                 std::vector<std::shared_ptr<const std::string>> fixed,
                                 bool batch) {
  const auto where = [batch](size_t i) {
    return batch ? "jobs[" + std::to_string(i) + "]" : "job";
  };
  for (size_t i = 0; i < specs.size(); ++i) {
    Status s = CheckSubmittable(caller, specs[i], where(i));
    if (!s.ok()) return s;
  }
  if (!ctx_.writes().Writable()) {  // e.g. a full disk: refused before taking ids
    return Status(StatusCode::kUnavailable,
                  "the submission was not stored (" + ctx_.writes().Fault() + "): not accepted; retry");
  }
  const Instant now = ctx_.Now();
  store::WriteBatch write;
  std::vector<JobId> ids;
  for (size_t i = 0; i < specs.size(); ++i) {
    JobId id = 0;
    Status s = Ingest(caller, std::move(specs[i]), std::move(fixed[i]), now, write, id);
    if (!s.ok()) {
      // All or nothing: the batch's jobs already taken in were never stored nor acknowledged,
      // so they leave the core and the book as if never submitted (their ids are not reused).
      for (auto taken = ids.rbegin(); taken != ids.rend(); ++taken) book_.Withdraw(*taken);
      return InvalidArgument(where(i) + ": " + s.message());
    }
    ids.push_back(id);
  }
  ctx_.cycle().MarkDirty();
  if (Status stored = ctx_.writes().WriteAndWait(lock, std::move(write)); !stored.ok()) {
    return Unacknowledged(ids, stored);
  }
  // Logged once stored: the ids of a submission whose write failed were never submitted.
  submissions_ += static_cast<int64_t>(specs.size());
  LogSubmitted(caller, ids);
  if (batch) return json{{"ids", ids}};
  return json{{"id", ids[0]}};
}

Status JobRequests::Unacknowledged(const std::vector<JobId>& ids, const Status& stored) {
  for (JobId id : ids) {
    JobInfo* job = book_.Find(id);
    if (job == nullptr || job->phase() != core::AdmissionPhase::kPending) continue;
    book_.Withdraw(id);
    ctx_.writes().Withdrawn(id);
  }
  return Status(StatusCode::kUnavailable,
                "the submission was not stored (" + stored.message() + "): not accepted; retry");
}

void JobRequests::LogSubmitted(const Caller& caller, const std::vector<JobId>& ids) {
  if (ids.size() == 1) {
    const JobInfo* job = book_.Find(ids[0]);
    ctx_.log().info("job {}: submitted by {} to {}", ids[0], caller.user,
                   job != nullptr ? job->queue.str() : std::string("?"));
  } else if (!ids.empty()) {
    ctx_.log().info("jobs {}-{}: {} submitted by {}", ids.front(), ids.back(), ids.size(),
                   caller.user);
  }
}

// --- Detail ------------------------------------------------------------------------------------

Result<json> JobRequests::Get(JobId id) {
  JobInfo* job = book_.Find(id);
  if (job == nullptr && ctx_.state().Knows(id)) {
    return NotFound("job " + std::to_string(id) + " ended more than " +
                    std::to_string(ctx_.options().keep_ended_seconds) +
                    " s ago and is no longer kept (keep_ended_seconds)");
  }
  if (job == nullptr) return NoJob(id);
  return JobJson(*job, book_, ctx_.state(), ctx_.Now(), true);
}

// --- Actions ------------------------------------------------------------------------------------

json JobRequests::AnswerAfterCommit(Lock& lock, JobInfo& job, store::WriteBatch batch) {
  // The job as the action left it, taken before the lock is released for the commit.
  json answer = JobJson(job, book_, ctx_.state(), ctx_.Now(), false);
  (void)ctx_.writes().WriteAndWait(lock, std::move(batch));  // a failure is resynced (context.h)
  return answer;
}

Result<json> JobRequests::Cancel(Lock& lock, const Caller& caller, JobId id) {
  JobInfo* job = book_.Find(id);
  if (job == nullptr) return NoJob(id);
  SLUICE_RETURN_IF_ERROR(RefuseUnlessOwner(caller, *job));
  store::WriteBatch batch;
  SLUICE_RETURN_IF_ERROR(CancelJob(caller, *job, batch));
  return AnswerAfterCommit(lock, *job, std::move(batch));
}

Status JobRequests::CancelJob(const Caller& caller, JobInfo& job_ref, store::WriteBatch& batch) {
  JobInfo* job = &job_ref;
  const JobId id = job->row.id;
  const JobState state = job->state();
  const json event = {{"event", "cancel"}, {"time", ctx_.Now()}, {"by", caller.user}};
  if (IsWaiting(state)) {
    AppendJobEvent(job->row, event);
    (void)ctx_.ApplyLocked(core::JobCancelled{id}, "");
    job->SetPhase(core::AdmissionPhase::kEnded);
    job->row.end_time = ctx_.Now();
    book_.SetState(*job, JobState::kCancelled, "(by " + caller.user + ")", batch);
    ctx_.cycle().MarkDirty();
  } else if (state == JobState::kAdmitting || state == JobState::kRunning) {
    AppendJobEvent(job->row, event);
    job->row.cancel_requested = true;
    job->row.end_time = ctx_.Now();
    if (state == JobState::kAdmitting && job->launch().launch_sent_ms < 0 &&
        !job->from_earlier_epoch) {
      // Never sent to an agent: release at once.
      book_.Finish(*job, 0, "", false, batch);
    } else {
      // The agent kills it (R-SRV-2: a cancel during ADMITTING kills it if it launches);
      // its slots are released when the agent reports the kill or the host is lost.
      book_.SetState(*job, JobState::kCancelled, "(by " + caller.user + "; killing)", batch);
      ctx_.wakeups().Mark(job->launch().launch_host);
    }
  } else {
    return FailedPrecondition("job " + FormatJobId(id) + " is already " + job->StateText());
  }
  return Status::Ok();
}

Result<json> JobRequests::Hold(Lock& lock, const Caller& caller, JobId id, bool held) {
  JobInfo* job = book_.Find(id);
  if (job == nullptr) return NoJob(id);
  SLUICE_RETURN_IF_ERROR(RefuseUnlessOwner(caller, *job));
  store::WriteBatch batch;
  SLUICE_RETURN_IF_ERROR(HoldJob(caller, *job, held, batch));
  return AnswerAfterCommit(lock, *job, std::move(batch));
}

Status JobRequests::HoldJob(const Caller& caller, JobInfo& job, bool held,
                            store::WriteBatch& batch) {
  const JobId id = job.row.id;
  const core::Event event =
      held ? core::Event(core::JobHeld{id}) : core::Event(core::JobReleased{id});
  if (!job.in_core || !ctx_.ApplyLocked(event, "").ok()) {
    return FailedPrecondition(
        "job " + FormatJobId(id) + " is " + job.StateText() + "; " +
        (held ? "only PENDING jobs can be held" : "only HELD jobs can be released"));
  }
  AppendJobEvent(job.row,
                 {{"event", held ? "hold" : "release"}, {"time", ctx_.Now()}, {"by", caller.user}});
  book_.SetState(job, held ? JobState::kHeld : JobState::kPending, "(by " + caller.user + ")",
                 batch);
  ctx_.cycle().MarkDirty();
  return Status::Ok();
}

}  // namespace sluice::server
