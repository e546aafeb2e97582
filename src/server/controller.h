// Controller: the server's state machine, testable without sockets (R-SRV-1 … R-SRV-6).
//
// It owns the core ClusterState and drives it the way the simulator does — events in
// (Apply), Scheduler::RunCycle with explanations, Commit — and adds what a real cluster
// needs: the durable store, agents and their leases, two-phase admission, and users.
//
// Representation:
//  - state_: the core's view. A job the server has ADMITTING or RUNNING is running in the
//    core (it holds its allocation); jobs ended before this start are not in the core.
//  - jobs_ (by id, ordered): every job's persisted row (store::StoredJob) plus server-only
//    bookkeeping (launch host, whether its launch may be sent, its last main reason). An
//    entry is never erased: a listing keeps pointers to them across lock releases.
//  - agents_ (by host name): registration, last heartbeat, lease status.
// Two-phase admission (R-SRV-2): a StartJob becomes an ADMITTING row in the same store
// transaction as the cycle's UpdateAdmission records (the bypass increment, R-ADM-3); only
// once that transaction committed may the launch go to the launching agent (the first host
// of the allocation); the agent's report moves the job to RUNNING.
// Restart: Create() restores every unfinished job through Restore (same ingest path as a new
// submission, original sequence and admission record), restores allocations, and marks every
// host unavailable until its agent registers. No cycle runs while ADMITTING records from the
// previous epoch are unresolved (their agent reports, or its lease and grace expire).
// Thread-safety: every public method locks one mutex; Submit and Heartbeat wait for store
// commits without holding it. Time comes from the injected clock (milliseconds).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/logger.h>

#include "config/cluster_yaml.h"
#include "core/cycle/scheduler.h"
#include "core/model/cluster_state.h"
#include "server/job_text.h"
#include "store/store.h"

namespace sluice::server {

struct ControllerOptions {
  int64_t lease_ms = 10'000;          // host unavail after this long without a heartbeat
  int64_t host_loss_grace_ms = 5'000;  // on_host_loss after lease + grace
  int32_t max_dispatch_attempts = 3;   // failed launches before EXIT DISPATCH_FAILED
  int64_t heartbeat_ms = 500;          // the wait_ms agents should use
  int64_t relaunch_ms = 3'000;         // repeat an unconfirmed launch after this long
  int32_t kill_grace_seconds = 10;
  // Explain pending jobs (reasons) at most this often: decisions do not depend on it, and
  // explaining costs time per pending job. 0: every cycle.
  int64_t explain_interval_ms = 0;
  // Ended jobs leave the controller's memory (listings, job detail) this long after they end,
  // as LSF's CLEAN_PERIOD and Slurm's MinJobAge do; their rows stay in the store and
  // dependencies on them keep their verdict. -1: keep them all (`sluice server` accepts -1 or
  // at least 60).
  int64_t keep_ended_seconds = 3600;
  std::string config_path;             // re-read by Reconfigure()
};

// An HTTP-shaped outcome: status code and JSON body (an {"error": ...} object when >= 400).
// Large listings come already serialised in `text` (then `body` is null): building a tree
// of 100,000 job objects only to dump it costs more than writing the text.
struct Reply {
  int status = 200;
  nlohmann::json body;
  std::string text;  // the body as JSON text when not empty

  static Reply Error(int status, const std::string& message) {
    return Reply{status, {{"error", message}}};
  }

  // The body as JSON (`text` parsed when set); for tests and small replies.
  nlohmann::json Json() const {
    return text.empty() ? body : nlohmann::json::parse(text, nullptr, false);
  }
};

// Who is calling (auth.h resolves tokens).
struct Caller {
  std::string user;
  bool admin = false;
};

// One state transition, for the SSE stream.
struct JobEvent {
  JobId id = 0;
  std::string state;
  std::optional<std::string> reason;
};

class Controller {
 public:
  using ClockMs = std::function<int64_t()>;  // wall-clock milliseconds since the epoch

  // Builds the state from `config` and restores what `store` holds.
  static Result<std::unique_ptr<Controller>> Create(core::ClusterConfig config,
                                                    config::AuthConfig auth, store::Store* store,
                                                    ControllerOptions options, ClockMs clock,
                                                    std::shared_ptr<spdlog::logger> log);
  ~Controller();

  // Resolves a bearer token (R-SRV-5): a user (caller filled in) or the agent token (`agent`
  // set). False for an empty or unknown token.
  bool Authenticate(const std::string& token, Caller& caller, bool& agent) const;

  // --- Users (each returns the HTTP reply of docs/api.md) ---
  // Waits for the commit before answering (R-SRV-1).
  Reply Submit(const Caller& caller, const nlohmann::json& body);
  Reply SubmitBatch(const Caller& caller, const nlohmann::json& body);
  Reply ListJobs(const std::map<std::string, std::string>& query);
  Reply GetJob(JobId id);
  Reply Cancel(const Caller& caller, JobId id);
  Reply Hold(const Caller& caller, JobId id, bool held);
  Reply Hosts();
  Reply Queues();
  Reply Limits();
  Reply QueueAction(const Caller& caller, const std::string& queue, const std::string& action);
  Reply HostAction(const Caller& caller, const std::string& host, const std::string& action);
  // Re-reads options.config_path (admin API and SIGHUP).
  Reply Reconfigure();
  // Replaces the configuration (validated whole; R-SRV-4b).
  Reply Reconfigure(core::ClusterConfig config);

  // --- Agents ---
  Reply Register(const nlohmann::json& body);
  // Long poll: returns at once with work or reports, else after body.wait_ms.
  Reply Heartbeat(const std::string& agent, const nlohmann::json& body);

  // --- Scheduling ---
  // Checks leases and, when something changed or a timer is due, runs one cycle. The
  // scheduling thread (Start) calls it; tests call it directly.
  void Tick();
  // Starts/stops the scheduling thread (cycles on events, debounced, and on timers).
  void Start();
  void Stop();
  // Waits until every queued store write has committed (tests).
  void FlushStore();

  // --- Observation ---
  std::string Metrics();
  uint64_t epoch() const { return epoch_; }
  // Registers a listener for job events (SSE); returns an id for Unsubscribe.
  int Subscribe(std::function<void(const JobEvent&)> listener);
  void Unsubscribe(int id);
  // Decisions of the cycles run so far (restart equivalence tests), if recording.
  void RecordDecisions(bool on);
  std::vector<std::string> RecordedDecisions();
  // True while ADMITTING records of an earlier epoch are unresolved (no cycle runs).
  bool Reconciling();

  struct JobInfo;
  struct AgentInfo;

 private:
  Controller(core::ClusterState state, core::ClusterConfig config, config::AuthConfig auth,
             store::Store* store, ControllerOptions options, ClockMs clock,
             std::shared_ptr<spdlog::logger> log);

  Status Restore(const store::Snapshot& snap);
  int64_t NowMs() const { return clock_(); }
  Instant Now() const { return clock_() / 1000; }
  void MarkDirty();
  void RunCycleLocked();
  void CheckLeasesLocked();
  // Drops the jobs that ended more than keep_ended_seconds ago.
  void ForgetEndedLocked();
  // Host state the core should see: unavail without a live agent, closed by an admin, or as
  // configured.
  core::HostState EffectiveHostState(const std::string& host) const;
  void SyncHostStateLocked(const std::string& host);
  core::ClusterConfig EffectiveConfigLocked(const core::ClusterConfig& base) const;
  // Transitions; each updates the row, logs and emits an event, and adds the row to `batch`.
  void SetStateLocked(JobInfo& job, const std::string& state, const std::string& why,
                      store::WriteBatch& batch);
  void FinishLocked(JobInfo& job, int32_t exit_code, const std::string& cause, bool killed,
                    store::WriteBatch& batch);
  void RequeueLocked(JobInfo& job, const std::string& why, store::WriteBatch& batch);
  void HostLossLocked(const std::string& host, store::WriteBatch& batch);
  // ADMITTING -> RUNNING once its agent reports it runs (a cancelled one only records it).
  void ConfirmRunningLocked(JobInfo& job, const std::string& why, store::WriteBatch& batch);
  // A running job its host lost: requeued or ended HOST_LOST per its queue's on_host_loss.
  void LoseJobLocked(JobInfo& job, const std::string& why, store::WriteBatch& batch);
  void SyncRowLocked(JobInfo& job);  // copies the core's admission record into the row
  // Writes the batch; `then` runs after the commit (with the lock held) before waiters wake.
  void WriteLocked(store::WriteBatch batch, std::function<void()> then = nullptr);
  Status WriteAndWait(std::unique_lock<std::mutex>& lock, store::WriteBatch batch);
  nlohmann::json LaunchOf(const JobInfo& job) const;
  nlohmann::json JobJson(const JobInfo& job, bool detail) const;
  // A job's listing fields, copied under the lock (job_text.h).
  JobListEntry ListEntryLocked(const JobInfo& job, bool with_reasons) const;
  nlohmann::json HostJson(const core::Host& host) const;
  nlohmann::json QueueJson(const core::Queue& queue) const;
  // `fixed`: FixedJobText of each spec, built before the lock was taken.
  Reply SubmitLocked(std::unique_lock<std::mutex>& lock, const Caller& caller,
                     std::vector<nlohmann::json> specs,
                     std::vector<std::shared_ptr<const std::string>> fixed, bool batch);
  Status CheckSubmittable(const Caller& caller, const nlohmann::json& spec,
                          const std::string& where, bool& forbidden);
  JobInfo* FindJobLocked(JobId id);
  void EmitLocked(const JobInfo& job);

  mutable std::mutex mu_;
  std::condition_variable work_cv_;    // heartbeats wait here for launches/kills
  std::condition_variable cycle_cv_;   // the scheduling thread waits here
  core::ClusterState state_;
  core::ClusterConfig base_config_;    // as loaded from the file (before overrides)
  config::AuthConfig auth_;
  store::Store* store_;
  ControllerOptions options_;
  ClockMs clock_;
  std::shared_ptr<spdlog::logger> log_;
  core::Scheduler scheduler_;
  uint64_t epoch_ = 0;
  int64_t config_version_ = 0;
  int64_t start_ms_ = 0;
  JobId next_id_ = 1;
  // Shared: a listing keeps the jobs it selected alive across its unlocked chunks while
  // ForgetEndedLocked may drop them from the map.
  std::map<JobId, std::shared_ptr<JobInfo>> jobs_;
  std::set<std::pair<Instant, JobId>> ended_by_time_;  // jobs_ that ended, by when they ended
  std::map<std::string, std::unique_ptr<AgentInfo>> agents_;
  std::set<std::string> dynamic_hosts_;          // added by registration (persisted)
  std::set<std::string> admin_closed_hosts_;
  std::map<std::string, bool> queue_open_;       // admin overrides
  std::map<std::string, bool> queue_active_;
  bool dirty_ = true;
  std::optional<Instant> wake_at_;
  int64_t last_explain_ms_ = -1;
  bool explain_due_ = false;  // a cycle ran without explanations since the last one
  std::map<int, std::function<void(const JobEvent&)>> listeners_;
  int next_listener_ = 1;
  bool recording_ = false;
  std::vector<std::string> recorded_;
  // Metrics not kept by the core.
  std::vector<int64_t> cycle_buckets_;
  double cycle_sum_ = 0;
  int64_t cycle_count_ = 0;
  int64_t submissions_ = 0;
  std::thread thread_;
  bool stopping_ = false;
};

}  // namespace sluice::server
