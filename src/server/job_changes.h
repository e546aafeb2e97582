// JobChanges: changing a job in place (R-UX-7; docs/api.md PATCH /v1/jobs/{id} and
// POST /v1/jobs/{id}/requeue): modify a waiting job (bmod, scontrol update), change a running
// job's run limit (administrators), requeue a running or ended job (brequeue).
//
// Modify, steps: 1. the body merged over the stored spec and checked as a submission
// (ParseSubmission: 400 naming the field); 2. who may (owner or admin, 403; the queue's
// submit_users) and which state (PENDING/HELD; RUNNING/ADMITTING only run_limit by an
// admin; else 409); 3. the core's candidate (request compiled: 400) and Scheduler::NeverRuns
// (422 with the cause: the job is unchanged); 4. JobModified through core::Apply (a new queue
// means its end), the book's record, a log line naming each change, one store batch, an
// event; answered after the commit.
// Requeue: a RUNNING/ADMITTING job whose launch went out is killed by its agent and requeued
// at its original sequence when the agent reports the exit (JobInfo::requeue_requested; a
// lost host requeues it too); one never launched is requeued at once. An ended job (in
// memory, or read back from the store) pends again under its id at its original sequence
// (JobRevived).
// Outcomes: the job object; failures kInvalidArgument, kPermissionDenied, kNotFound,
// kFailedPrecondition, kUnavailable; a Refusal kNotModified naming the cause (outcome.h).
// Thread-safety: every method REQUIRES the context's mutex held through `lock`; it is
// released while the store commits.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "config/cluster_yaml.h"
#include "server/context.h"
#include "server/outcome.h"
#include "server/job_book.h"

namespace sluice::server {

class JobChanges {
 public:
  using Lock = MutexLock;

  JobChanges(ServerContext& ctx, JobBook& book) : ctx_(ctx), book_(book) {}

  // `policy`: the `jobs:` section, applied to the changed spec as to a submission.
  Outcome<nlohmann::json> Modify(Lock& lock, const Caller& caller, JobId id,
                                 const nlohmann::json& body, const config::JobPolicy& policy);
  Outcome<nlohmann::json> Requeue(Lock& lock, const Caller& caller, JobId id);

 private:
  Outcome<nlohmann::json> ModifyRunning(Lock& lock, const Caller& caller, JobInfo& job, const nlohmann::json& spec);
  Outcome<nlohmann::json> ModifyWaiting(Lock& lock, const Caller& caller, JobInfo& job, nlohmann::json spec);
  Outcome<nlohmann::json> RequeueEnded(Lock& lock, const Caller& caller, JobId id, JobInfo* job);
  // The job object after `batch` committed.
  Outcome<nlohmann::json> Answer(Lock& lock, JobInfo& job, store::WriteBatch batch);

  ServerContext& ctx_;
  JobBook& book_;
};

// The run-limit orders for `host`'s agent (agent protocol "run_limits"), taken: each changed
// limit is sent once. REQUIRES the context's mutex held.
nlohmann::json TakeRunLimitOrders(JobBook& book, const std::string& host);

}  // namespace sluice::server
