#include "server/cluster_settings.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "wire/gpu_report.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// A stored host row of this kind holds only the GPUs an agent detected on a host the cluster
// YAML lists (`gpus: auto`); it never adds a host.
constexpr const char* kDetectedRow = "detected_gpus";
// A stored host row of this kind holds the whole spec of a host the file dropped while it ran
// jobs (it drains): a restart lists it until its jobs are restored, then drops it again.
// Never deleted (the store keeps host rows): one of a host that has drained since only lists
// it during the restore.
constexpr const char* kDrainingRow = "draining";

// The stored devices of a host row, or none when it has none or they no longer decode.
std::vector<core::GpuDevice> StoredGpus(const json& row, const std::string& host,
                                        ServerContext& ctx) {
  auto it = row.find("gpus");
  if (it == row.end()) return {};
  Result<std::vector<core::GpuDevice>> gpus = wire::DecodeGpuDevices(*it, "gpus");
  if (!gpus) {
    ctx.log().warn("host {}: its stored GPUs were dropped ({}); its agent reports them again", host,
                   gpus.error().message());
    return {};
  }
  return std::move(*gpus);
}

// A draining host's spec from its row (DrainingRow).
core::HostSpec DrainingSpec(const json& row, const std::string& host, ServerContext& ctx) {
  core::HostSpec spec{.name = host};
  spec.slots = row.value("slots", 1);
  spec.resources = row.value("resources", std::map<std::string, int64_t>{});
  spec.attributes = row.value("attributes", std::map<std::string, std::string>{});
  spec.tags = row.value("tags", std::vector<std::string>{});
  spec.gpus = StoredGpus(row, host, ctx);
  if (!spec.gpus.empty()) spec.resources.erase("gpu");  // the core counts the list
  return spec;
}

store::StoredHost DrainingRow(const core::HostSpec& spec) {
  json stored = {{kDrainingRow, true},
                 {"slots", spec.slots},
                 {"resources", spec.resources},
                 {"attributes", spec.attributes},
                 {"tags", spec.tags}};
  if (!spec.gpus.empty()) stored["gpus"] = wire::EncodeGpuDevices(spec.gpus);
  return store::StoredHost{spec.name, stored.dump()};
}

// kListed for a host the core does not know.
core::HostMembership MembershipOf(const core::Topology& topology, const std::string& host) {
  auto index = topology.FindHost(host);
  return index ? topology.hosts()[*index].membership : core::HostMembership::kListed;
}

}  // namespace

// --- Restart ------------------------------------------------------------------------------------

Status ClusterSettings::RestoreHosts(const std::vector<store::StoredHost>& hosts) {
  for (const store::StoredHost& h : hosts) {
    json j = json::parse(h.spec, nullptr, false);
    if (!j.is_object()) j = json::object();
    if (auto index = ctx_.state().topology().FindHost(h.name)) {  // in the cluster YAML
      if (ctx_.state().topology().hosts()[*index].spec.gpus_auto) {
        std::vector<core::GpuDevice> gpus = StoredGpus(j, h.name, ctx_);
        if (!gpus.empty()) detected_gpus_[h.name] = std::move(gpus);
      }
      continue;
    }
    if (j.value(kDrainingRow, false)) {
      draining_restored_.push_back(DrainingSpec(j, h.name, ctx_));
      continue;
    }
    if (j.value(kDetectedRow, false)) continue;  // a `gpus: auto` host no longer in the file
    if (!auth_.allow_dynamic_hosts) {
      // Not back unless the YAML allows agents to add hosts (issue 19: junk hosts registered
      // with the agent token survived restarts).
      ctx_.log().warn(
          "host {}: added by an agent earlier; not restored (auth.allow_dynamic_hosts "
          "is off)",
          h.name);
      continue;
    }
    core::HostSpec spec{.name = h.name};
    spec.slots = j.value("slots", 1);
    spec.resources = j.value("resources", std::map<std::string, int64_t>{});
    spec.attributes = j.value("attributes", std::map<std::string, std::string>{});
    spec.tags = j.value("tags", std::vector<std::string>{});
    if (j.contains("gpus")) {  // its devices come from its agent
      spec.gpus = StoredGpus(j, h.name, ctx_);
      spec.gpus_auto = true;
      spec.resources.erase("gpu");  // the core counts the list
      detected_gpus_[h.name] = spec.gpus;
    }
    SLUICE_RETURN_IF_ERROR(ctx_.ApplyLocked(core::HostAdded{spec}, ""));
    dynamic_hosts_.insert(h.name);
  }
  return Status::Ok();
}

void ClusterSettings::RestoreOverrides(const std::map<std::string, int64_t>& settings) {
  for (const auto& [key, value] : settings) {
    const size_t slash = key.find('/');
    if (slash == std::string::npos) continue;
    const std::string kind = key.substr(0, slash);
    const std::string name = key.substr(slash + 1);
    if (kind == kSettingQueueOpen) queue_open_[name] = value != 0;
    if (kind == kSettingQueueActive) queue_active_[name] = value != 0;
    if (kind == kSettingHostClosed) closed_hosts_.insert(name);
  }
  // Every host accepts work while the jobs' allocations are restored next: they are checked
  // against capacity, not against states that only keep new work off (the jobs of a closed
  // host run on). Controller::Restore then makes every host unavail until its agent registers.
  core::ClusterConfig config = EffectiveConfig(base_, [](const std::string&) { return true; });
  config.hosts.insert(config.hosts.end(), draining_restored_.begin(), draining_restored_.end());
  for (core::HostSpec& host : config.hosts) host.state = core::HostState::kOk;
  (void)ctx_.ApplyLocked(core::ConfigChanged{std::move(config)},
                         "queue overrides and detected GPUs not restored");
}

void ClusterSettings::SettleDrainingHosts() {
  if (draining_restored_.empty()) return;
  draining_restored_.clear();
  core::ClusterConfig config = EffectiveConfig(base_, [](const std::string&) { return true; });
  for (core::HostSpec& host : config.hosts) host.state = core::HostState::kOk;
  (void)ctx_.ApplyLocked(core::ConfigChanged{std::move(config)}, "draining hosts not settled");
  for (const core::Host& host : ctx_.state().topology().hosts()) {
    if (host.membership != core::HostMembership::kLeaving) continue;
    ctx_.log().info("host {}: no longer in the configuration; drains ({} job(s) run there)",
                    host.spec.name, host.running_jobs);
  }
}

void ClusterSettings::RestoreReclaimDeadlines(const std::map<std::string, int64_t>& settings) {
  for (const core::Queue& queue : ctx_.state().topology().queues()) {
    auto it = settings.find(std::string(kSettingReclaimDeadline) + "/" + queue.spec.name);
    if (it == settings.end()) continue;
    (void)ctx_.ApplyLocked(core::ReclaimDeadlineRestored{queue.index, it->second},
                           "queue " + queue.spec.name + ": reclaim deadline");
  }
}

// --- What the core sees -------------------------------------------------------------------------

core::HostState ClusterSettings::HostStateFor(const std::string& host, bool live) const {
  const core::HostMembership membership = MembershipOf(ctx_.state().topology(), host);
  if (!live || membership == core::HostMembership::kGone) return core::HostState::kUnavail;
  if (closed_hosts_.contains(host) || health_failures_.contains(host) ||
      membership == core::HostMembership::kLeaving) {
    return core::HostState::kClosed;
  }
  for (const core::HostSpec& spec : base_.hosts) {
    if (spec.name == host) return spec.state;
  }
  return core::HostState::kOk;
}

core::ClusterConfig ClusterSettings::EffectiveConfig(const core::ClusterConfig& base,
                                                     const LiveFn& live) const {
  core::ClusterConfig config = base;
  for (core::HostSpec& spec : config.hosts) {
    // `gpus: auto`: the devices its agent reported (AdoptGpus) stay until it reports again;
    // the file has none to give back.
    if (auto it = detected_gpus_.find(spec.name); spec.gpus_auto && it != detected_gpus_.end()) {
      spec.gpus = it->second;
      spec.resources.erase("gpu");
    }
    if (!live(spec.name)) {
      spec.state = core::HostState::kUnavail;
    } else if (closed_hosts_.contains(spec.name) || health_failures_.contains(spec.name)) {
      spec.state = core::HostState::kClosed;
    }
  }
  for (const std::string& name : dynamic_hosts_) {
    const bool in_file = std::any_of(config.hosts.begin(), config.hosts.end(),
                                     [&](const core::HostSpec& s) { return s.name == name; });
    if (in_file) continue;
    auto index = ctx_.state().topology().FindHost(name);
    if (!index) continue;
    core::HostSpec spec = ctx_.state().topology().hosts()[*index].spec;
    if (auto it = detected_gpus_.find(name); spec.gpus_auto && it != detected_gpus_.end()) {
      spec.gpus = it->second;
      spec.resources.erase("gpu");  // the core counts the list
    }
    config.hosts.push_back(std::move(spec));
  }
  for (core::QueueSpec& q : config.queues) {
    if (auto it = queue_open_.find(q.name); it != queue_open_.end()) q.open = it->second;
    if (auto it = queue_active_.find(q.name); it != queue_active_.end()) q.active = it->second;
  }
  return config;
}

// --- Changes ------------------------------------------------------------------------------------

store::StoredHost ClusterSettings::AgentHostRow(const core::HostSpec& spec) {
  json stored = {{"slots", spec.slots},
                 {"resources", spec.resources},
                 {"attributes", spec.attributes},
                 {"tags", spec.tags}};
  // Its devices come from its agent (maybe none for now): a restart keeps both.
  if (spec.gpus_auto) stored["gpus"] = wire::EncodeGpuDevices(spec.gpus);
  return store::StoredHost{spec.name, stored.dump()};
}

store::StoredHost ClusterSettings::DetectedGpusRow(const std::string& host) const {
  const auto it = detected_gpus_.find(host);
  json stored = {{kDetectedRow, true},
                 {"gpus", wire::EncodeGpuDevices(it == detected_gpus_.end()
                                                     ? std::vector<core::GpuDevice>{}
                                                     : it->second)}};
  return store::StoredHost{host, stored.dump()};
}

store::WriteBatch ClusterSettings::Rows() const {
  store::WriteBatch batch;
  const core::Topology& topology = ctx_.state().topology();
  for (const std::string& host : dynamic_hosts_) {
    auto index = topology.FindHost(host);
    if (!index) continue;
    core::HostSpec spec = topology.hosts()[*index].spec;
    if (spec.gpus_auto) spec.resources.erase("gpu");  // its count comes with its devices
    batch.hosts.push_back(AgentHostRow(spec));
  }
  for (const auto& [host, devices] : detected_gpus_) {
    if (!dynamic_hosts_.contains(host)) batch.hosts.push_back(DetectedGpusRow(host));
  }
  // Every host's: an open one deletes the key, in case its `sluice host open` was lost.
  for (const core::Host& host : topology.hosts()) {
    const std::string& name = host.spec.name;
    batch.settings[std::string(kSettingHostClosed) + "/" + name] =
        closed_hosts_.contains(name) ? std::optional<int64_t>(1) : std::nullopt;
  }
  AddDrainingRows(batch);
  for (const auto& [queue, open] : queue_open_) {
    batch.settings[std::string(kSettingQueueOpen) + "/" + queue] = open ? 1 : 0;
  }
  for (const auto& [queue, active] : queue_active_) {
    batch.settings[std::string(kSettingQueueActive) + "/" + queue] = active ? 1 : 0;
  }
  return batch;
}

store::StoredHost ClusterSettings::AddAgentHost(const core::HostSpec& spec) {
  dynamic_hosts_.insert(spec.name);
  if (spec.gpus_auto) detected_gpus_[spec.name] = spec.gpus;
  return AgentHostRow(spec);
}

Result<store::StoredHost> ClusterSettings::AdoptGpus(const std::string& host,
                                                     std::vector<core::GpuDevice> devices,
                                                     const LiveFn& live) {
  auto index = ctx_.state().topology().FindHost(host);
  if (!index) return NotFound("no host " + host);
  core::HostSpec spec = ctx_.state().topology().hosts()[*index].spec;
  std::optional<std::vector<core::GpuDevice>> saved;
  if (auto it = detected_gpus_.find(host); it != detected_gpus_.end()) saved = it->second;
  detected_gpus_[host] = std::move(devices);
  Status s = ctx_.ApplyLocked(core::ConfigChanged{EffectiveConfig(base_, live)}, "");
  if (!s.ok()) {
    if (saved) {
      detected_gpus_[host] = std::move(*saved);
    } else {
      detected_gpus_.erase(host);
    }
    return FailedPrecondition(s.message());
  }
  if (dynamic_hosts_.contains(host)) {
    spec.gpus = detected_gpus_[host];
    spec.resources.erase("gpu");
    return AddAgentHost(spec);
  }
  return DetectedGpusRow(host);
}

Result<store::WriteBatch> ClusterSettings::SetQueue(const std::string& queue,
                                                    const std::string& action, const LiveFn& live) {
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
    return NotFound("no queue action '" + action + "'");
  }
  Status s = ctx_.ApplyLocked(core::ConfigChanged{EffectiveConfig(base_, live)}, "");
  if (!s.ok()) {  // nothing changed: neither stored nor kept in memory
    queue_open_ = saved_open;
    queue_active_ = saved_active;
    return FailedPrecondition(s.message());
  }
  return batch;
}

Result<store::WriteBatch> ClusterSettings::SetHost(const std::string& host,
                                                   const std::string& action) {
  store::WriteBatch batch;
  const std::string key = std::string(kSettingHostClosed) + "/" + host;
  if (action == "open") {
    closed_hosts_.erase(host);
    batch.settings[key] = std::nullopt;
  } else if (action == "close") {
    closed_hosts_.insert(host);
    batch.settings[key] = 1;
  } else {
    return NotFound("no host action '" + action + "'");
  }
  return batch;
}

const std::string* ClusterSettings::HealthFailure(const std::string& host) const {
  auto it = health_failures_.find(host);
  return it == health_failures_.end() ? nullptr : &it->second;
}

bool ClusterSettings::SetHealthFailure(const std::string& host,
                                       std::optional<std::string> failure) {
  auto it = health_failures_.find(host);
  if (!failure) {
    if (it == health_failures_.end()) return false;
    health_failures_.erase(it);
    return true;
  }
  if (it != health_failures_.end() && it->second == *failure) return false;
  health_failures_[host] = std::move(*failure);
  return true;
}

std::vector<std::string> ClusterSettings::SetAuth(config::AuthConfig auth) {
  auth_ = std::move(auth);
  const config::HealthChecks& health = auth_.health;
  health_in_use_ = health_in_use_ || health.all ||
                   std::any_of(health.hosts.begin(), health.hosts.end(),
                               [](const auto& entry) { return entry.second.has_value(); });
  std::vector<std::string> lifted;
  for (auto it = health_failures_.begin(); it != health_failures_.end();) {
    if (health.For(it->first)) {
      ++it;
      continue;
    }
    lifted.push_back(it->first);
    it = health_failures_.erase(it);
  }
  return lifted;
}

Result<store::WriteBatch> ClusterSettings::Replace(core::ClusterConfig config, const LiveFn& live) {
  // R-SRV-4b: validated whole (the core refuses to remove a queue or host with jobs and
  // changes nothing then); every pending job is classified again.
  Status s =
      ctx_.ApplyLocked(core::ConfigChanged{EffectiveConfig(config, live)}, "reconfigure refused");
  if (!s.ok()) return InvalidArgument(s.message());
  base_ = std::move(config);
  ++config_version_;
  ctx_.log().info("configuration version {} in force", config_version_);
  store::WriteBatch batch{.config_version = config_version_};
  AddDrainingRows(batch);
  for (const store::StoredHost& row : batch.hosts) {
    ctx_.log().info("host {}: no longer in the configuration but runs jobs: closed, it drains",
                    row.name);
  }
  return batch;
}

void ClusterSettings::AddDrainingRows(store::WriteBatch& batch) const {
  for (const core::Host& host : ctx_.state().topology().hosts()) {
    if (host.membership != core::HostMembership::kLeaving) continue;
    batch.hosts.push_back(DrainingRow(host.spec));
  }
}

}  // namespace sluice::server
