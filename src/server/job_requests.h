// JobRequests: what users ask of their jobs (docs/api.md "Users"; R-SRV-1, R-SRV-5):
// submit (one or a batch), detail, cancel, hold and release (the listing: job_listing.h).
// Each checks the request, changes the job book and the core through events, and answers once
// the change committed.
//
// Outcomes (Status codes; the HTTP front end maps them, http_reply.h):
//   kInvalidArgument  a malformed request or a job the cluster cannot take (named field);
//   kPermissionDenied a queue the user may not submit to, another user's job (R-SRV-5);
//   kNotFound         no such job (or no longer kept, keep_ended_seconds);
//   kFailedPrecondition the job's state does not allow the action;
//   kResourceExhausted a batch of more than 100,000 jobs.
// Thread-safety: every method takes the caller's lock on the context's mutex, held on entry
// and on return; it is released while the store commits.
#pragma once

#include <functional>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/cluster_yaml.h"
#include "server/context.h"
#include "server/job_book.h"

namespace sluice::server {

class JobRequests {
 public:
  using Lock = MutexLock;

  JobRequests(ServerContext& ctx, JobBook& book) : ctx_(ctx), book_(book) {}

  // Checks a body without the lock: the normalized specs (ParseSubmission) or an error.
  static Result<std::vector<nlohmann::json>> ParseBatch(const nlohmann::json& body);

  // Takes `specs` in all or nothing (R-SRV-1: acknowledged only once committed); `fixed` is
  // wire::FixedJobText of each spec, built before the lock was taken. Returns {"id"} for a single
  // submission, {"ids"} for a batch.
  Result<nlohmann::json> Submit(Lock& lock, const Caller& caller, std::vector<nlohmann::json> specs,
                                std::vector<std::shared_ptr<const std::string>> fixed, bool batch);
  // GET /v1/jobs is job_listing.h.
  Result<nlohmann::json> Get(JobId id);
  Result<nlohmann::json> Cancel(Lock& lock, const Caller& caller, JobId id);
  Result<nlohmann::json> Hold(Lock& lock, const Caller& caller, JobId id, bool held);
  // The state changes of Cancel and Hold for one job the caller may act on, into `batch`
  // (array_requests.cc applies them to each element).
  Status CancelJob(const Caller& caller, JobInfo& job, store::WriteBatch& batch);
  Status HoldJob(const Caller& caller, JobInfo& job, bool held, store::WriteBatch& batch);

  int64_t submissions() const { return submissions_; }

  // Checks the `reservation` a job names (advance_reservations.h: its users and groups);
  // unset, a job naming one is left to the core (which refuses an unknown name).
  using ReservationCheck =
      std::function<Status(const Caller&, const std::string& name, const std::string& where)>;
  void set_reservation_check(ReservationCheck check) { reservation_check_ = std::move(check); }

 private:
  // The spec may go to its queue: open, the user allowed, its resreq compiles.
  Status CheckSubmittable(const Caller& caller, const nlohmann::json& spec,
                          const std::string& where);
  // Step 2 of Submit for one spec: the job in the core and the book, its row in `write`.
  Status Ingest(const Caller& caller, nlohmann::json spec, std::shared_ptr<const std::string> fixed,
                Instant now, store::WriteBatch& write, JobId& id);
  // Ingest of a job array (R-UX-3, array_requests.cc): its parent record; the core makes
  // Jobs of its elements.
  Status IngestArray(nlohmann::json spec, std::shared_ptr<const std::string> fixed, Instant now,
                     store::WriteBatch& write, JobId id);
  void LogSubmitted(const Caller& caller, const std::vector<JobId>& ids);
  // A submission whose write failed (kUnavailable, R-HA-4) is not acknowledged: its jobs that
  // are still pending leave as if never submitted; answers kUnavailable.
  Status Unacknowledged(const std::vector<JobId>& ids, const Status& stored);
  // The job as an action left it, once the action's batch committed.
  nlohmann::json AnswerAfterCommit(Lock& lock, JobInfo& job, store::WriteBatch batch);

  ServerContext& ctx_;
  JobBook& book_;
  ReservationCheck reservation_check_;
  int64_t submissions_ = 0;
};

}  // namespace sluice::server
