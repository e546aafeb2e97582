// AgentRegistry: the agents of the cluster's hosts and their leases (R-SRV-2, R-SRV-3):
// registration with reconciliation, the long-poll heartbeat that carries launches, kills and
// acknowledgements, lease expiry and host loss.
//
// Representation: agents_ (by host name): registration in this epoch, last heartbeat, lease
// status, the long poll in progress, and the jobs an agent left unlisted at registration.
// Which jobs an agent launches is the job book's (JobBook::LaunchedBy).
// Invariants:
//  - a host is unavail in the core while its agent is not live (not registered in this
//    epoch, or silent for longer than the lease); ClusterSettings::HostStateFor decides;
//  - after a restart every host that had jobs is expected back: its lease counts from the
//    restart, and after lease + grace its jobs go by on_host_loss (R-SRV-3);
//  - an agent's reports (exits, launch failures, running jobs) are committed before its
//    heartbeat reply acknowledges them;
//  - a launch is sent only once its ADMITTING row committed; a preemption kill only once the
//    victim's marker committed.
// Thread-safety: every method REQUIRES the context's mutex held; Register and Heartbeat take
// the caller's lock and release it while the store commits and while a long poll waits.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/model/config.h"
#include "server/cluster_settings.h"
#include "server/context.h"
#include "server/job_book.h"
#include "server/job_credential.h"
#include "server/peek_broker.h"
#include "server/step_broker.h"
#include "server/views.h"
#include "wire/agent_batch.h"
#include "wire/agent_protocol.h"

namespace sluice::server {

// The agent protocol's messages are the wire layer's (wire/agent_protocol.h): the controller
// decodes a request with wire::DecodeRegister / wire::DecodeHeartbeat before the lock.
using Registration = wire::RegisterRequest;
using HeartbeatReport = wire::HeartbeatRequest;

class AgentRegistry {
 public:
  AgentRegistry(ServerContext& ctx, JobBook& book, ClusterSettings& settings)
      : ctx_(ctx), book_(book), settings_(settings) {}

  // Steps: 1. add an unknown host (persisted) or keep the configured spec; 2. the GPUs the
  // agent detected, if it sent them (ApplyDetectedGpus: taken, or the host closed); 3.
  // reconcile the jobs this agent launches with what it says it runs (R-SRV-2); 4. the host
  // accepts work again (unless closed). Returns the reply body (epoch, lease_seconds,
  // heartbeat_ms).
  // Errors: kFailedPrecondition (stale epoch), kInvalidArgument (the core refused the host),
  // kPermissionDenied (a name the YAML does not list, without auth.allow_dynamic_hosts),
  // kAlreadyExists (another agent instance holds the host within its lease; issue 19).
  Result<nlohmann::json> Register(const Registration& reg, MutexLock& lock);
  // Steps: 1. exits and launch failures end or re-pend jobs, RUNNING reports confirm
  // ADMITTING ones — all committed before the reply acknowledges them; 2. answer with
  // launches and kills, waiting up to wait_ms for some. Returns {epoch, launch, kill, ack}.
  // Errors: kNotFound (not registered in this epoch), kFailedPrecondition (stale epoch),
  // kAlreadyExists (another agent instance registered the host since).
  Result<nlohmann::json> Heartbeat(const std::string& name, const HeartbeatReport& report,
                                   MutexLock& lock);
  // The heartbeats of many hosts of one agent process (wire/agent_batch.h, agent_batch.cc):
  // Heartbeat's step 1 for each host, one commit for all, then one long poll over them all.
  // Returns {epoch, hosts: [{name, status, reply | error}]}; a host's refusal is its entry's.
  Result<nlohmann::json> HeartbeatBatch(const wire::BatchHeartbeatRequest& request,
                                        MutexLock& lock);

  // An agent silent for the lease makes its host unavail; after lease + grace its jobs go
  // by their queue's on_host_loss (the agent has killed them by then, R-SRV-3). An agent
  // expected after a restart that never came back counts from the start.
  void CheckLeases();
  // After a restart: `host` has jobs, so its agent is expected (its lease counts from
  // `since_ms`, when this controller took over).
  void Expect(const std::string& host, int64_t since_ms);
  // Registered in this epoch and within its lease.
  bool Live(const std::string& host) const;
  ClusterSettings::LiveFn LiveFn() const {
    return [this](const std::string& host) { return Live(host); };
  }
  AgentView View(const std::string& host) const;
  int64_t ConnectedCount() const;
  // Sets the core's state of `host` to what it should be (ClusterSettings::HostStateFor).
  void SyncHostState(const std::string& host);
  // An administrator opened `host`: its count of launch failures starts again.
  void HostOpened(const std::string& host);
  // True while ADMITTING records of an earlier epoch are unresolved (no cycle runs).
  bool Reconciling() const;
  // Where `sluice peek` orders wait for this agent and its answers go (R-UX-5).
  void set_peek_broker(PeekBroker* broker) { peeks_ = broker; }
  // Steps (step_requests.h): their orders ride in the heartbeat replies, and each job's
  // environment carries its step credential.
  void set_steps(StepBroker* broker, const JobCredentials* credentials) {
    steps_ = broker;
    credentials_ = credentials;
  }
  // The job's whole environment as its processes get it (EnvironmentOf's comment).
  // `spec`: JobBook::Spec(job).
  nlohmann::json JobEnvironment(const JobInfo& job, const nlohmann::json& spec) const {
    return EnvironmentOf(job, spec);
  }
  // A user's signal to a running job (issue 47, `sluice cancel --signal`): one order for the
  // agent of each of `hosts`, for the job's current `run`, sent once with its next heartbeat
  // reply. Orders are not stored: one lost with its reply, with a failover, or dropped when
  // the host's agent registers again or its host is lost, is not repeated (the user sends it
  // again, as with Slurm's scancel).
  void OrderSignal(JobId job, uint64_t run, const std::vector<std::string>& hosts,
                   const std::string& signal);

 private:
  struct Agent {
    bool registered = false;  // registered in this epoch
    std::string instance;     // the registered agent process (RegisterRequest::instance)
    int64_t last_heartbeat_ms = 0;
    bool unavail = false;         // lease expired
    bool loss_handled = false;    // on_host_loss applied to its jobs
    int64_t poll_generation = 0;  // a newer heartbeat ends an older long poll
    // When a batched long poll last looked at its work (agent_batch.cc): a poll that comes
    // sooner than the rescan interval after it looks again only if the host is marked.
    static constexpr int64_t kNever = std::numeric_limits<int64_t>::min() / 2;
    int64_t collected_ms = kNever;
    // Jobs it did not list as running when it registered: resolved at its next heartbeat,
    // after the exit reports that heartbeat carries (a job that ended while the controller
    // was down must not be requeued and run twice).
    std::set<JobId> unlisted;
    // Launch failures in a row the host caused (reset by a confirmed start): at
    // ControllerOptions::close_host_after_launch_failures the host is closed (issue 47.3).
    int32_t host_faults = 0;
    std::string closed_reason;           // set when that closed it; cleared when it is opened
    std::optional<wire::HostLoad> load;  // as its last heartbeat reported it (issue 47.9)
    // Its last heartbeat said it stops for a restart (issue 43): its jobs keep running under
    // their shepherds; cleared when it registers again.
    bool restarting = false;
  };

  // One host's part of a batched heartbeat (agent_batch.cc).
  struct BatchPart {
    const std::string* name;
    const HeartbeatReport* report;  // nullptr: a poll
    Status status;
    Agent* agent = nullptr;  // once checked in
    int64_t generation = 0;
    // null until something is added (thousands of parts per request: no empty arrays made)
    nlohmann::json ack;
    nlohmann::json launch;
    nlohmann::json kill;
  };
  // HeartbeatBatch's steps 3 and 4 and the look at one host's work (agent_batch.cc).
  void BatchPoll(std::vector<BatchPart>& parts,
                 const std::unordered_map<std::string_view, size_t>& index, int64_t wait_ms,
                 bool any_ack, MutexLock& lock);
  bool BatchCollect(BatchPart& part);
  nlohmann::json BatchReply(std::vector<BatchPart>& parts, bool compact);

  Agent& Entry(const std::string& host);
  // One host's heartbeat reply, single or batched: its work, the acknowledged reports and the
  // run-limit orders, plus the peek, step and signal orders waiting for it (taken: each goes
  // out once).
  nlohmann::json HostReply(const std::string& name, nlohmann::json launch, nlohmann::json kill,
                           nlohmann::json ack, nlohmann::json run_limits);
  // A heartbeat's (or a batched poll's) check-in: the host is registered in this epoch by
  // `instance` and `epoch` is not newer than ours (kNotFound, kFailedPrecondition,
  // kAlreadyExists otherwise); then its lease is renewed and a host marked unavailable is back.
  Result<Agent*> CheckIn(const std::string& name, const std::string& instance, uint64_t epoch);
  // HeartbeatBatch's check and step 1 for one host (agent_batch.cc); `report` nullptr: a poll.
  Status BatchReports(const std::string& name, const HeartbeatReport* report,
                      const std::string& instance, nlohmann::json& ack, store::WriteBatch& batch);
  // Register's check: the name is configured (or dynamic hosts are allowed), and no other
  // agent instance holds it within its lease. kPermissionDenied, kAlreadyExists otherwise.
  Status CheckClaim(const Registration& reg) const;
  // Register's GPU step (R-GPU-1), for the GPUs the agent detected: a `gpus: auto` host (or
  // one its agent added) takes them (AdoptGpus); a host configured with GPUs that they
  // contradict is closed with the reason (CloseForGpus); a host configured without GPUs is
  // left as it is, whatever the agent found.
  void ApplyDetectedGpus(const std::string& name, const wire::GpuReport& report,
                         store::WriteBatch& batch);
  // The host's devices become the detected ones (ClusterSettings::AdoptGpus): the topology
  // compiles them (and the `gpu` count) as for a configured host, later reconfigurations keep
  // them, and `batch` stores them so that a restart restores jobs holding them.
  void AdoptGpus(const core::HostSpec& have, const wire::GpuReport& report,
                 store::WriteBatch& batch);
  // Closes the host as NoteHostFault does, with `reason` shown in GET /v1/hosts.
  void CloseForGpus(const std::string& name, const std::string& reason, store::WriteBatch& batch);
  // A health check result (R-OPS-4, agent_health.cc): a failure of a configured check closes
  // the host with its message, a pass lifts that close (ClusterSettings::SetHealthFailure).
  void ApplyHealth(const std::string& name, const wire::HealthReport& report);
  std::string HealthFailureOf(const std::string& name) const;  // "" when it passes
  // The configuration dropped the host and it runs no job (core::HostMembership::kGone): its
  // agent is refused as a host never listed.
  bool Gone(const std::string& host) const;
  // Heartbeat step 1, one kind of report each; every change joins `batch`.
  void ApplyExits(const std::string& name, const HeartbeatReport& report, nlohmann::json& ack,
                  store::WriteBatch& batch);
  void ApplyLaunchFailures(const std::string& name, const HeartbeatReport& report,
                           nlohmann::json& ack, store::WriteBatch& batch);
  // One more launch failure the host caused; closes it at the limit (issue 47.3).
  void NoteHostFault(const std::string& name, const std::string& message, store::WriteBatch& batch);
  void ApplyRunning(const std::string& name, Agent& agent, const HeartbeatReport& report,
                    store::WriteBatch& batch);
  // Heartbeat step 2: the launches and kills due for `name` now.
  void CollectWork(const std::string& name, const std::set<JobId>& running, nlohmann::json& launch,
                   nlohmann::json& kill);
  void HostLoss(const std::string& host, store::WriteBatch& batch);
  // Whether a kill order for `id` goes out now: once, then again only after relaunch_ms (an
  // order lost with its reply), never in every long-poll reply (issue 19: a job that ignores
  // SIGTERM made a tight kill loop of heartbeats and log lines).
  bool KillDue(JobId id, int64_t now_ms);
  // `spec`: JobBook::Spec(job), read once by the caller (issue 45: neither the tree nor, once
  // stored, the text is kept).
  nlohmann::json LaunchOf(const JobInfo& job, const nlohmann::json& spec) const;
  nlohmann::json EnvironmentOf(const JobInfo& job, const nlohmann::json& spec) const;
  bool HasOrders(const std::string& name) const;  // peek, step or signal orders wait for it

  ServerContext& ctx_;
  JobBook& book_;
  ClusterSettings& settings_;
  std::map<std::string, std::unique_ptr<Agent>> agents_;
  std::map<JobId, int64_t> kill_sent_ms_;  // when the last kill order for a job went out
  std::map<std::string, std::vector<wire::SignalOrder>> signal_orders_;  // by host
  PeekBroker* peeks_ = nullptr;
  StepBroker* steps_ = nullptr;
  const JobCredentials* credentials_ = nullptr;
  mutable uint64_t reconciled_epoch_ = 0;  // Reconciling() found none left in this epoch
};

}  // namespace sluice::server
