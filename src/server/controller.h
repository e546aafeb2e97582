// Controller: the server's state machine, testable without sockets (R-SRV-1 … R-SRV-6). It
// drives the core the way the simulator does — events in (core::Apply), a cycle, Commit —
// and adds what a real cluster needs: the durable store, agents and their leases, two-phase
// admission, and users.
//
// It is the composition of parts, each a file with one job and its own contract (the table
// of docs/design/architecture.md, "The controller", lists the same):
//   ServerContext      (context.h)            wiring: the lock, the core's state, clock, log,
//                                             options, and three signalling parts:
//     StoreWriter      (store_writer.h)         the epoch, fencing, writes in flight, faults;
//     CycleSignal      (cycle_signal.h)         what asks the scheduling thread for a cycle;
//     AgentWakeups     (agent_wakeups.h)        where agents' long polls wait for work;
//   ClusterSettings    (cluster_settings.h)   configuration, administrators' overrides;
//   RequestAuthenticator (request_auth.h)     tokens and MUNGE (its own lock);
//   JobBook            (job_book.h)           job records, restore mapping, retention, events;
//   AgentRegistry      (agent_registry.h)     leases, registration, heartbeats, reconciliation;
//   CycleRunner        (cycle_runner.h)       the drive loop's handler, cycle timing;
//   JobRequests        (job_requests.h)       users' submit, detail, cancel, hold;
//   JobListing         (job_listing.h)        GET /v1/jobs in chunks, the lock per chunk;
//   JobChanges         (job_changes.h)        modify and requeue;
//   ArrayRequests      (array_requests.h)     actions on arrays, elements and ranges;
//   SubmissionRefusals (submission_refusal.h) jobs that could never run, refused;
//   IdempotencyKeys    (idempotency.h)        a repeated submission answered once;
//   PeekBroker         (peek_broker.h)        a running job's output through its agent;
//   StepRequests       (step_requests.h)      steps in running jobs, their streams through
//                                             a StepBroker (step_broker.h), job credentials;
//   HistoryKeeper      (history_api.h)        retention where the store purges itself (thread);
//   StartEstimator     (estimates.h)          estimated starts (its own thread);
//   AdvanceReservations (advance_reservations.h) advance reservations and their rules;
// and the HTTP front end (http_api.h) calls it. This file wires them, runs the scheduling
// thread, restores at start, and answers each call with an Outcome (outcome.h): a value, a
// failed Status or a Refusal; only the front end maps it to HTTP (http_reply.h).
//
// Two-phase admission (R-SRV-2): a StartJob becomes an ADMITTING row in the same store
// transaction as the cycle's UpdateAdmission records (the bypass increment, R-ADM-3); only
// once that transaction committed may the launch go to the launching agent (the first host
// of the allocation); the agent's report moves the job to RUNNING.
// Restart: Create() restores every unfinished job (same ingest path as a new submission,
// original sequence and admission record), restores allocations, and marks every host
// unavailable until its agent registers. No cycle runs while ADMITTING records from the
// previous epoch are unresolved (their agent reports, or its lease and grace expire).
// Thread-safety: every public method takes the controller's lock (ServerContext::mu(), the
// single-writer rule of docs/design/architecture.md "Lock order") unless it says otherwise;
// Submit, Heartbeat and the admin actions wait for store commits without holding it. Threads:
// the HTTP workers call the public methods; the scheduling thread (Start) runs Tick's turns;
// the store's committer runs commit callbacks; HistoryKeeper and StartEstimator have their
// own. Time comes from the injected clock (milliseconds).
#pragma once

#include <spdlog/logger.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config/cluster_yaml.h"
#include "core/model/config.h"
#include "server/advance_reservations.h"
#include "server/agent_registry.h"
#include "server/array_requests.h"
#include "server/cluster_settings.h"
#include "server/context.h"
#include "server/cycle_runner.h"
#include "server/estimates.h"
#include "server/history_api.h"
#include "server/outcome.h"
#include "server/idempotency.h"
#include "server/job_book.h"
#include "server/job_changes.h"
#include "server/job_pages.h"
#include "server/job_requests.h"
#include "server/request_auth.h"
#include "server/ui_session.h"
#include "server/step_broker.h"
#include "server/step_requests.h"
#include "server/submission_refusal.h"
#include "server/test_faults.h"
#include "store/store.h"

namespace sluice::daemon {
class ServiceNotifier;
}  // namespace sluice::daemon

namespace sluice::server {

struct StatsSample;  // stats_sampler.h
class JobListing;    // job_listing.h
struct JobListingOptions;

// What a Controller is built from.
struct ControllerDeps {
  core::ClusterConfig config;
  config::AuthConfig auth;
  store::Store* store = nullptr;  // borrowed; outlives the controller
  ControllerOptions options;
  // A standby (R-HA-2): Create builds the controller without reading the store; TakeOver
  // restores once the store leads.
  bool standby = false;
  ClockMs clock;                        // wall-clock milliseconds since the epoch
  std::shared_ptr<spdlog::logger> log;  // null: spdlog's default logger
  // Borrowed, outlives the controller; null: none. The scheduling thread keeps its watchdog
  // alive (R-OPS-2): a hung cycle stops the keep-alives and systemd restarts the server.
  daemon::ServiceNotifier* notifier = nullptr;
};

// What a controller call answers (outcome.h).
using Answer = Outcome<nlohmann::json>;

// How long a job read waits for the writes in flight (a group commit takes milliseconds; a
// store in trouble must not stall readers for longer).
inline constexpr std::chrono::milliseconds kReadWaitsForWrites{2000};

class Controller {
 public:
  using ClockMs = server::ClockMs;

  // Builds the state from deps.config and restores what deps.store holds (unless standby).
  static Result<std::unique_ptr<Controller>> Create(ControllerDeps deps);

  // --- High availability (controller_ha.cc; R-HA-1 ... R-HA-5) ---
  // REQUIRES: the store leads; called once (Create calls it unless standby). Takes the
  // store's epoch, loads and restores (R-HA-3: the same path as a restart).
  Status TakeOver();
  // The store deposed this controller: from now on it writes, launches and schedules nothing
  // (Writable() stays false); logs that it steps down. Safe from any thread, without waits.
  void StepDown(const Status& why);
  bool Writable() { return ctx_.writes().Writable(); }
  // Why the store cannot be written now ("" when it can): a full disk, a lost quorum.
  std::string StoreFault() const { return ctx_.writes().Fault(); }
  // When the first cycle of this epoch ran (wall-clock ms; 0 not yet).
  int64_t FirstCycleMs();
  // Agents heard within their lease (registered in this epoch and not unavailable).
  int64_t ConnectedAgents();
  ~Controller();

  // Resolves a bearer token (R-SRV-5): a user, a dashboard session's user (ui_session.h), or the
  // agent token (Caller::agent).
  // Errors: kUnauthenticated for an empty or unknown token.
  Result<Caller> Authenticate(const std::string& token);
  // Resolves an `Authorization` header: a bearer token, a dashboard session (ui_session.h) or a
  // MUNGE credential (R-SEC-2, request_auth.h). Does not take the controller's mutex.
  Result<Caller> AuthenticateRequest(const std::string& authorization);
  // POST /v1/ui/sessions (issue 47.8, `sluice ui-login`): a dashboard session token for the
  // caller, valid `ttl_seconds` of `body` (default 12 h, at most 7 days).
  Answer OpenUiSession(const Caller& caller, const nlohmann::json& body);

  // --- Users (each answers the body of docs/api.md, or why not) ---
  // Waits for the commit before answering (R-SRV-1). A non-empty `idempotency_key` (the
  // `Idempotency-Key` header) makes a repeat answer the original result (idempotency.h).
  Answer Submit(const Caller& caller, const nlohmann::json& body,
               const std::string& idempotency_key = "");
  Answer SubmitBatch(const Caller& caller, const nlohmann::json& body,
                    const std::string& idempotency_key = "");
  // GET /v1/jobs, streamed (job_listing.h, issue 45): Open checks the query (its errors come
  // before any byte of the reply); each NextJobChunk takes the lock for one chunk and appends
  // its text, until listing.done().
  Result<std::unique_ptr<JobListing>> OpenJobListing(
      const std::map<std::string, std::string>& query);
  Result<std::unique_ptr<JobListing>> OpenJobListing(
      const std::map<std::string, std::string>& query, const JobListingOptions& options);
  void NextJobChunk(JobListing& listing, std::string& out);
  // The whole listing's text (Open, then every chunk): for tests and small callers.
  Result<std::string> ListJobs(const std::map<std::string, std::string>& query);
  Answer GetJob(JobId id);
  Answer Cancel(const Caller& caller, JobId id);
  Answer Hold(const Caller& caller, JobId id, bool held);
  // POST /v1/jobs/ID/signal {"signal": NAME} (issue 47; job_signals.cc): `signal` goes to
  // the running job (an array: its running elements, those in [first, last] when given) on
  // every host of its allocation; it goes on running unless the signal ends it.
  // Errors: kInvalidArgument (not a signal wire/signal_name.h accepts), kNotFound,
  // kPermissionDenied (another user's job), kFailedPrecondition (nothing of it runs).
  Answer Signal(const Caller& caller, JobId id, std::optional<std::pair<int32_t, int32_t>> range,
                const std::string& signal);
  // POST /v1/jobs/ID/ACTION?index=A[-B]: the elements of array ID in [A, B] (R-UX-3).
  Answer ActOnElements(const Caller& caller, JobId id, int32_t first, int32_t last,
                      ArrayAction action);
  // GET /v1/jobs/ID/peek: the tail of a running job's output from its agent (peek_broker.h).
  Answer Peek(const Caller& caller, JobId id, int64_t lines, std::optional<int64_t> offset);
  // Steps (R-LAUNCH-1..3; step_requests.h): POST /v1/jobs/ID/steps and the streams.
  Result<Caller> CallerOfJobCredential(const std::string& credential, JobId id) {
    return steps_.CallerOfCredential(credential, id);
  }
  Answer OpenStep(const Caller& caller, JobId id, const nlohmann::json& body) {
    return steps_.Open(caller, id, body);
  }
  Answer StepOutput(const Caller& caller, JobId id, int64_t step, int64_t after, int64_t wait_ms) {
    return steps_.ReadOutput(caller, id, step, after, wait_ms);
  }
  Answer StepInput(const Caller& caller, JobId id, int64_t step, const nlohmann::json& body) {
    return steps_.WriteInput(caller, id, step, body);
  }
  Answer AgentStepInput(const std::string& host, JobId id, int64_t step, int64_t after,
                        int64_t wait_ms) {
    return steps_.AgentReadInput(host, id, step, after, wait_ms);
  }
  Answer AgentStepOutput(const std::string& host, JobId id, int64_t step,
                         const nlohmann::json& body) {
    return steps_.AgentWriteOutput(host, id, step, body);
  }
  Answer Hosts();
  Answer Queues();
  Answer Limits();
  Answer QueueAction(const Caller& caller, const std::string& queue, const std::string& action);
  Answer HostAction(const Caller& caller, const std::string& host, const std::string& action);
  // Advance reservations (issue 42, R-RSV-1; advance_reservations.h, docs/reservations.md):
  // /v1/reservations. Errors as AdvanceReservations says (kInvalidArgument naming the field,
  // kPermissionDenied, kNotFound, kAlreadyExists and kFailedPrecondition: 409).
  Answer CreateReservation(const Caller& caller, const nlohmann::json& body);
  Answer ModifyReservation(const Caller& caller, const std::string& name,
                           const nlohmann::json& body);
  Answer DeleteReservation(const Caller& caller, const std::string& name);
  Answer ListReservations();
  Answer GetReservation(const std::string& name);
  Answer PreviewReservation(const Caller& caller, const nlohmann::json& body);
  // Re-reads options.config_path (admin API and SIGHUP). On a standby the file is validated
  // and put in force when this controller takes over (R-OPS-3: "it reloads when it leads").
  Answer Reconfigure();
  // Replaces the configuration (validated whole; R-SRV-4b).
  Answer Reconfigure(core::ClusterConfig config);
  // History (R-UX-6; history_api.cc): GET /v1/history and /v1/history/summary.
  Result<std::string> History(const std::map<std::string, std::string>& params);
  Result<std::string> HistorySummary(const std::map<std::string, std::string>& params);
  // GET /v1/history/ID (issue 47.6): the job's runs, oldest first, and its timeline; from
  // memory while the controller holds the job, else from the store.
  Answer JobHistory(JobId id);
  // Modify and requeue (R-UX-7; job_changes.h): PATCH /v1/jobs/{id}, POST .../requeue.
  Answer Modify(const Caller& caller, JobId id, const nlohmann::json& body);
  Answer Requeue(const Caller& caller, JobId id);
  // The dashboard (R-UI-1, R-UI-3): a page of GET /v1/jobs (job_pages.h) and one sample of
  // the cluster, with job counts by state and pending reason when `with_counts`
  // (stats_counts.cc).
  Result<JobPage> ListJobPage(const std::map<std::string, std::string>& query);
  void SampleStats(StatsSample& out, bool with_counts);

  // --- Agents ---
  Answer Register(const nlohmann::json& body);
  // Long poll: returns at once with work or reports, else after body.wait_ms.
  Answer Heartbeat(const std::string& agent, const nlohmann::json& body);
  // The heartbeats of many hosts in one request (wire/agent_batch.h, R-SCALE-1).
  Answer HeartbeatBatch(const nlohmann::json& body);

  // --- Scheduling ---
  // Checks leases and, when something changed or a timer is due, runs one cycle. The
  // scheduling thread (Start) calls it; tests call it directly.
  void Tick();
  // Starts/stops the scheduling thread (cycles on events, debounced, and on timers; the
  // watchdog's keep-alive on every turn).
  void Start();
  void Stop();
  // Waits until every queued store write has committed (tests).
  void FlushStore();
  // One retention pass now, by whichever of HistoryKeeper and PurgeHistoryLocked keeps this
  // store's retention (tests; the server runs it on its own schedule).
  void PurgeHistoryNow();
  // Refreshes the estimated starts now (the estimator's thread does it in the background).
  RefreshStats RefreshEstimates() { return estimator_.Refresh(); }

  // --- Observation ---
  std::string Metrics();  // metrics.cc
  // The job counts the book keeps and the same from a walk over every job (tests: equal).
  std::pair<JobCounts, JobCounts> JobCountsKeptAndWalked();  // metrics.cc
  uint64_t epoch() const { return ctx_.writes().epoch(); }
  // Registers a listener for job events (SSE); returns an id for Unsubscribe.
  int Subscribe(std::function<void(const JobEvent&)> listener);
  void Unsubscribe(int id);
  // Decisions of the cycles run so far (restart equivalence tests), if recording.
  void RecordDecisions(bool on);
  std::vector<std::string> RecordedDecisions();
  // True while ADMITTING records of an earlier epoch are unresolved (no cycle runs).
  bool Reconciling();

 private:
  Controller(core::ClusterState state, ControllerDeps deps);

  // Steps: 1. hosts agents added earlier; 2. administrators' queue and host overrides, and
  // the advance reservations; 3. every job (RestoreJobs), the agents of hosts with jobs expected
  // back; 4. every host unavailable until its agent registers (an agent not yet back is unknown,
  // not idle); 5. queues' reclaim deadlines. The snapshot holds no job rows
  // (Store::LoadAllButJobs): step 3 reads them (RestoreJobs).
  Status Restore(store::Snapshot& snap);
  // Step 3: every stored job back into the book and the core, the idempotency keys and the
  // history's index (the writes it needs join `batch`).
  Result<JobBook::Restored> RestoreJobs(store::WriteBatch& batch);
  // The second half of Reconfigure(): the new configuration and its auth section in force.
  Answer ApplyReload(core::ClusterConfig config, config::AuthConfig auth);
  // The job credentials' key from the store's settings, or a new one written to `batch`.
  void RestoreCredentialKey(const store::Snapshot& snap, store::WriteBatch& batch);
  // The common end of Submit and SubmitBatch (idempotent_submit.cc): the key's earlier
  // result, else the refusals, then the submission. REQUIRES the mutex held (`lock`).
  Answer SubmitLocked(MutexLock& lock, const Caller& runs_as,
                     const std::string& key, const std::string& digest,
                     std::vector<nlohmann::json> specs,
                     std::vector<std::shared_ptr<const std::string>> fixed, bool batch);
  // The `jobs:` policy on each spec (job_environment.h): the env filtered, the output
  // defaulted, and `fixed` rewritten for a spec whose output it set (REQUIRES the mutex held).
  void ApplyPolicy(const Caller& runs_as, std::vector<nlohmann::json>& specs,
                   std::vector<std::shared_ptr<const std::string>>& fixed);
  // The scheduling thread: waits for a turn (a change, a timer, the explain interval, or at
  // the latest when the watchdog needs a keep-alive), keeps the watchdog alive and turns;
  // until Stop. A test fault (test_faults.h) makes it hang instead.
  void SchedulingLoop();
  // Leases, retention, then a cycle when `due` (REQUIRES the mutex held).
  void TurnLocked(bool due);
  // While !Writable(): once the store leads again after a failed write, writes every job's
  // row as memory has it (and deletes withdrawn ones), then lets writes resume (R-HA-4).
  void ResyncLocked();
  // Deletes the rows of jobs ended more than keep_history_seconds ago (R-HA-5), at most
  // every 30 s, for a store that does not purge itself (etcd); with one that does (SQLite,
  // Store::PurgesHistory) HistoryKeeper does it and this does nothing.
  void PurgeHistoryLocked();
  // The first cycle of the epoch: note and log when it runs.
  void NoteCycleLocked();
  // The admin actions' common end: log, answer `answer`, after `batch` committed.
  Answer AnswerAfterCommit(MutexLock& lock, nlohmann::json answer,
                          store::WriteBatch batch);

  // The default queue's name, under the lock (history_api.cc).
  std::string DefaultQueueName();

  ServerContext ctx_;
  RequestAuthenticator authenticator_;  // tokens and MUNGE; locks itself
  ClusterSettings settings_;
  JobBook book_;
  AgentRegistry agents_;
  CycleRunner runner_;
  JobRequests requests_;
  JobChanges changes_;
  ArrayRequests arrays_;         // R-UX-3
  SubmissionRefusals refusals_;  // R-UX-2
  IdempotencyKeys idempotency_;  // issue 19
  PeekBroker peeks_;             // R-UX-5
  StepBroker step_streams_;      // R-LAUNCH-1..3
  JobCredentials job_credentials_;
  UiSessions ui_sessions_;       // issue 47.8: the same key as job_credentials_
  StepRequests steps_;
  HistoryKeeper keeper_;         // retention where the store purges itself (history_api.h)
  StartEstimator estimator_;     // estimated starts (estimates.h)
  AdvanceReservations reservations_;  // issue 42 (advance_reservations.h)
  daemon::ServiceNotifier* notifier_;  // null: none
  const FaultPlan faults_ = FaultPlan::FromEnvironment();
  std::thread thread_;
  // Retention (R-HA-5): ended jobs by end time, and when the last purge ran.
  std::set<std::pair<Instant, JobId>> history_;
  int64_t last_purge_ms_ = 0;
  // This epoch: when this controller took over (agents' leases count from it), when its
  // first cycle ran (0: not yet), and the earliest next resync attempt (ResyncLocked).
  int64_t start_ms_ = 0;
  int64_t first_cycle_ms_ = 0;
  // A configuration reloaded while a standby, put in force by TakeOver; taken_over_ set there.
  struct PendingReload {
    core::ClusterConfig config;
    config::AuthConfig auth;
  };
  std::optional<PendingReload> reload_when_leading_;
  bool taken_over_ = false;
  int64_t next_resync_ms_ = 0;
};

}  // namespace sluice::server
