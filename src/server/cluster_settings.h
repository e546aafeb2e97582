// ClusterSettings: the configuration the controller runs with and what administrators and
// agents changed on top of it (R-SRV-4, R-SRV-4b, R-SRV-5): the cluster YAML as loaded, the
// bearer tokens, queues opened/closed/activated/inactivated, hosts closed, hosts added by
// agents' registrations; and, from these, the configuration and host states the core sees.
//
// Representation: base_ is the file's configuration before overrides; the overrides are kept
// by name, as the store's settings hold them ("queue_open/<queue>" and so on, the kSetting*
// keys below). The effective configuration is recomputed from them on every change.
// Invariant: a host is unavail in the core unless its agent is live (registered, lease not
// expired); else closed when an administrator closed it, its health check fails (R-OPS-4,
// two separate closes: see SetHealthFailure) or the file dropped it while it runs jobs (it
// drains: core::HostMembership); else as configured. A draining host has a host row of its
// own (kDrainingRow) so that a restart restores its jobs on it and it drains on.
// Thread-safety: every method REQUIRES the context's mutex held.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/cluster_yaml.h"
#include "core/model/config.h"
#include "server/context.h"
#include "store/store.h"

namespace sluice::server {

// Keys of the store's settings: "<kind>/<queue or host name>".
inline constexpr const char* kSettingQueueOpen = "queue_open";              // 0 or 1
inline constexpr const char* kSettingQueueActive = "queue_active";          // 0 or 1
inline constexpr const char* kSettingHostClosed = "host_closed";            // 1; absent when open
inline constexpr const char* kSettingReclaimDeadline = "reclaim_deadline";  // an Instant

class ClusterSettings {
 public:
  // Whether a host's agent is live (AgentRegistry::Live).
  using LiveFn = std::function<bool(const std::string& host)>;

  ClusterSettings(ServerContext& ctx, core::ClusterConfig base, config::AuthConfig auth)
      : ctx_(ctx), base_(std::move(base)) {
    (void)SetAuth(std::move(auth));
  }

  // --- Restart ---
  // Hosts agents added earlier that the cluster YAML does not name (HostAdded), with their
  // GPUs; and the GPUs agents detected on `gpus: auto` hosts, which RestoreOverrides then
  // gives the core (before jobs holding them are restored).
  Status RestoreHosts(const std::vector<store::StoredHost>& hosts);
  // Administrators' queue and host overrides; the queue overrides reconfigure the core, the
  // hosts that drained before the restart still listed (their jobs are restored next).
  void RestoreOverrides(const std::map<std::string, int64_t>& settings);
  // Once the jobs are restored: the hosts that drained before the restart leave the
  // configuration again, to drain on (or be gone when no job of theirs came back).
  void SettleDrainingHosts();
  // Queues' reclaim deadlines: a restart does not give a starved queue a new grace (R-CAP-3).
  void RestoreReclaimDeadlines(const std::map<std::string, int64_t>& settings);

  // --- What the core sees ---
  core::HostState HostStateFor(const std::string& host, bool live) const;
  bool HostClosed(const std::string& host) const { return closed_hosts_.contains(host); }
  // --- Health checks (R-OPS-4; docs/health-checks.md) ---
  // The check `host`'s agent runs (the file's `health_check`, its own or the default).
  std::optional<core::HealthCheck> HealthCheckFor(const std::string& host) const {
    return auth_.health.For(host);
  }
  // Whether any configuration since the start named a check: heartbeat replies then carry
  // each host's (a change must reach live agents, a removal too).
  bool HealthChecksInUse() const { return health_in_use_; }
  // The message of `host`'s failing check; nullptr: it passes (or none has failed).
  const std::string* HealthFailure(const std::string& host) const;
  // Records `host`'s check result: `failure` its message, nullopt a pass. A failure closes the
  // host (HostStateFor) whatever an administrator did; a pass lifts only this close, never an
  // administrator's (`sluice host open` lifts only that one, so neither fights the other:
  // NHC onlines only the nodes it offlined). Kept in memory only: after a restart each agent
  // reports its last result when it registers. Returns whether anything changed.
  bool SetHealthFailure(const std::string& host, std::optional<std::string> failure);
  // `base` with the overrides and agent-added hosts applied.
  core::ClusterConfig EffectiveConfig(const core::ClusterConfig& base, const LiveFn& live) const;

  // --- Resync ---
  // Every host row (draining hosts' too) and override setting as memory has them: rewritten
  // after a failed write
  // (Controller::ResyncLocked), since a configured host's agent may register while the store
  // is read-only (disk full) and its detected GPUs or GPU mismatch must not be lost.
  store::WriteBatch Rows() const;

  // --- Changes (each returns what the caller stores; nothing changes on error) ---
  // A host an agent registered with that the core did not have (already added to the core).
  store::StoredHost AddAgentHost(const core::HostSpec& spec);
  // The GPUs an agent detected on a host whose devices come from it (`gpus: auto`, or added by
  // its agent with GPUs): the core is reconfigured with them, and the row returned keeps them
  // over a restart. Errors: kFailedPrecondition (the core refused them; nothing changed).
  Result<store::StoredHost> AdoptGpus(const std::string& host, std::vector<core::GpuDevice> devices,
                                      const LiveFn& live);
  // open/close/activate/inactivate a queue. Errors: kNotFound (unknown action),
  // kFailedPrecondition (the core refused the configuration; nothing changed).
  Result<store::WriteBatch> SetQueue(const std::string& queue, const std::string& action,
                                     const LiveFn& live);
  // open/close a host. Errors: kNotFound (unknown action).
  Result<store::WriteBatch> SetHost(const std::string& host, const std::string& action);
  // Replaces the configuration (validated whole by the core). Errors: kInvalidArgument.
  Result<store::WriteBatch> Replace(core::ClusterConfig config, const LiveFn& live);
  // New auth settings (health checks included); returns the hosts whose failing check the
  // configuration no longer has (their close is lifted: the caller syncs their state).
  std::vector<std::string> SetAuth(config::AuthConfig auth);
  const config::AuthConfig& auth() const { return auth_; }

  int64_t config_version() const { return config_version_; }
  void set_config_version(int64_t version) { config_version_ = version; }
  size_t agent_host_count() const { return dynamic_hosts_.size(); }
  // Whether agents may add hosts the YAML does not list (auth.allow_dynamic_hosts).
  bool allow_dynamic_hosts() const { return auth_.allow_dynamic_hosts; }

 private:
  // The row of a host an agent added, as `spec` describes it.
  static store::StoredHost AgentHostRow(const core::HostSpec& spec);
  // The row keeping the GPUs an agent detected on a `gpus: auto` host of the file.
  store::StoredHost DetectedGpusRow(const std::string& host) const;
  // The rows of the hosts draining now (the whole spec: the file no longer has it).
  void AddDrainingRows(store::WriteBatch& batch) const;

  ServerContext& ctx_;
  core::ClusterConfig base_;  // as loaded from the file (before overrides)
  config::AuthConfig auth_;
  int64_t config_version_ = 0;
  std::set<std::string> dynamic_hosts_;                 // added by registration (persisted)
  std::set<std::string> closed_hosts_;                  // closed by an administrator
  std::map<std::string, std::string> health_failures_;  // by host: its failing check's message
  bool health_in_use_ = false;
  // Devices agents detected, by host (persisted): they stand in for the file's `gpus: auto`.
  std::map<std::string, std::vector<core::GpuDevice>> detected_gpus_;
  std::map<std::string, bool> queue_open_;
  std::map<std::string, bool> queue_active_;
  std::vector<core::HostSpec> draining_restored_;  // during Restore only
};

}  // namespace sluice::server
