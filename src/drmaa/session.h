// Session: the process's DRMAA session (drmaa_init .. drmaa_exit) over the controller's REST
// API (docs/api.md), with the user's credentials as the CLI sends them: SLUICE_TOKEN, else a
// MUNGE credential per request (client/rest_client.h).
//
// Representation: whether a session is open, its generation (bumped by every open and
// close, so that a call that began in one session does not touch the next), the client
// options, the DRMAA ids of the jobs submitted in it in submission order ("7", and "8[1]" ...
// for a bulk job's elements), the ids whose end drmaa_wait or drmaa_synchronize(dispose)
// reaped, and idle REST clients for reuse.
// Invariants: reaped ids stay reaped for the session's life (a second wait is
// DRMAA_ERRNO_INVALID_JOB); a thread holds the lock only to read or change that state, never
// across a REST call; a RestClient is used by one thread at a time (leased from the pool).
// Waiting (Wait, Synchronize) polls the job objects with a back-off from 50 ms to 1 s until
// the deadline the caller gave; the poll sleeps on a condition variable that Close wakes, so
// waiters return DRMAA_ERRNO_NO_ACTIVE_SESSION at once when another thread exits the session.
// Thread-safety: every method may be called from any thread (python3-drmaa and Galaxy call
// from several); the lock is LockRank::kDrmaaSession.
// Implements R-COMPAT-4 (session, submission, control, synchronize, wait, job_ps).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "client/rest_client.h"
#include "drmaa/attributes.h"
#include "drmaa/error.h"
#include "drmaa/submission.h"

namespace sluice::drmaa {

class Session {
 public:
  // What drmaa_wait returns for a job.
  struct Waited {
    std::string job_id;
    int stat = 0;
    std::vector<std::string> rusage;
  };

  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // drmaa_init. `contact`: a controller URL list as SLUICE_SERVER takes it; empty means
  // SLUICE_SERVER; a URL without a scheme is http://. Asks the controller who the credentials
  // are (GET /v1/whoami, looking for an answering controller for 3 s at most), so a wrong URL
  // or credential fails here. Errors: ALREADY_ACTIVE_SESSION,
  // NO_DEFAULT_CONTACT_STRING_SELECTED (no contact, no SLUICE_SERVER), INVALID_CONTACT_STRING
  // (a scheme other than http/https), DEFAULT_CONTACT_STRING_ERROR (SLUICE_SERVER is such, or
  // does not answer), DRMS_INIT_FAILED (the contact does not answer), AUTH_FAILURE.
  Error Open(std::string_view contact);
  // drmaa_exit: jobs keep running; waiters in other threads return NO_ACTIVE_SESSION.
  Error Close();
  // The open session's controllers, else the default contact (SLUICE_SERVER, may be "").
  std::string Contact() const;
  bool active() const;

  // drmaa_run_job: the job's DRMAA id. Errors: BuildSubmission's, then the controller's
  // refusal (DENIED_BY_DRM, TRY_LATER, AUTH_FAILURE, DRM_COMMUNICATION_FAILURE).
  Expected<std::string> RunJob(const TemplateValues& values);
  // drmaa_run_bulk_jobs: one Sluice array, the ids of its elements.
  Expected<std::vector<std::string>> RunBulkJobs(const TemplateValues& values,
                                                 const BulkRange& range);
  // drmaa_control; `job_id` may be DRMAA_JOB_IDS_SESSION_ALL.
  Error Control(std::string_view job_id, int action);
  // drmaa_synchronize; `job_ids` may hold DRMAA_JOB_IDS_SESSION_ALL. `timeout` in seconds,
  // DRMAA_TIMEOUT_WAIT_FOREVER or DRMAA_TIMEOUT_NO_WAIT.
  Error Synchronize(const std::vector<std::string>& job_ids, long timeout, bool dispose);
  // drmaa_wait; `job_id` may be DRMAA_JOB_IDS_SESSION_ANY. `id_capacity` is the size of the
  // caller's buffer for the id: a job whose id does not fit is not reaped (INVALID_ARGUMENT).
  Expected<Waited> Wait(std::string_view job_id, long timeout, size_t id_capacity);
  // drmaa_job_ps.
  Expected<int> JobState(std::string_view job_id);

 private:
  class Lease;
  struct Deadline;

  Expected<Lease> Acquire();
  void Return(uint64_t generation, std::unique_ptr<client::RestClient> client);
  // Submits `body` (POST /v1/jobs); the new job's id.
  Expected<int64_t> Submit(Lease& lease, const nlohmann::json& body);
  void Record(uint64_t generation, const std::vector<std::string>& ids);
  std::vector<std::string> Unreaped() const;
  bool IsReaped(const std::string& id) const;
  // Marks `id` reaped; false when another thread reaped it first.
  bool Reap(uint64_t generation, const std::string& id);
  Error ControlOne(client::RestClient& rest, const std::string& job_id, int action);
  // Sleeps until the next poll, at most until `deadline`. Errors: NO_ACTIVE_SESSION when the
  // session of `generation` closed, EXIT_TIMEOUT when the deadline passed.
  Error Pause(uint64_t generation, const Deadline& deadline, std::chrono::milliseconds& backoff);

  mutable Mutex mu_{LockRank::kDrmaaSession};
  std::condition_variable_any closed_;  // notified by Close
  bool active_ SLUICE_GUARDED_BY(mu_) = false;
  bool opening_ SLUICE_GUARDED_BY(mu_) = false;
  uint64_t generation_ SLUICE_GUARDED_BY(mu_) = 0;
  client::ClientOptions options_ SLUICE_GUARDED_BY(mu_);
  std::vector<std::string> submitted_ SLUICE_GUARDED_BY(mu_);
  std::set<std::string> reaped_ SLUICE_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<client::RestClient>> idle_ SLUICE_GUARDED_BY(mu_);
};

// The process's session (never destroyed: threads may still be in a call at exit).
Session& ProcessSession();

}  // namespace sluice::drmaa
