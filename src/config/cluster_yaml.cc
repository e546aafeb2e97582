// Reads the cluster YAML of SPEC §2 with yaml-cpp and validates it; the contract is in
// cluster_yaml.h. This file assembles the cluster (hosts, host groups, shared resources,
// queues, limits); the YAML reading helpers are in yaml_reader.h, host ranges in
// host_range.cc, the `auth:` section in auth_yaml.h.
//
// Representation: every value is read through a yaml::Field (yaml_reader.h), which carries the
// YAML node with its field path and line, so any check can name its location. Sections are
// read in dependency order (hosts, host_groups, shared_resources, queue_defaults, queues,
// default_queue, limits, auth) whatever their order in the file, so each cross-reference is
// checked against sections already read. All yaml-cpp calls run under the try block of
// ParseClusterConfig, which turns any exception into a Status.
#include "config/cluster_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "config/auth_yaml.h"
#include "config/gpu_yaml.h"
#include "config/health_yaml.h"
#include "config/jobs_yaml.h"
#include "config/reservation_policy_yaml.h"
#include "config/quota_yaml.h"
#include "config/yaml_reader.h"
#include "core/model/request_catalog.h"
#include "core/model/window.h"
#include "core/resreq/parser.h"
#include "core/resreq/validate.h"

namespace sluice::config {
namespace {

using core::ClusterConfig;
using core::HostSpec;
using core::LimitScope;
using core::LimitSpec;
using core::QueueSpec;
using yaml::Assign;
using yaml::ChildPath;
using yaml::Clip;
using yaml::Describe;
using yaml::Entry;
using yaml::Field;
using yaml::FormatNumber;
using yaml::IsStringTagged;
using yaml::LineOf;
using yaml::Quote;
using yaml::Reader;

// Resource names appear in resource requests and as limit keys: identifiers, not limit words.
bool IsReservedResourceName(std::string_view name) {
  static constexpr std::string_view kReserved[] = {"name",     "slots",    "jobs",       "users",
                                                   "per_user", "queues",   "per_queue",  "hosts",
                                                   "per_host", "projects", "per_project"};
  return std::find(std::begin(kReserved), std::end(kReserved), name) != std::end(kReserved);
}

bool IsIdentifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string ErrnoText(int err) {
  std::string text = std::generic_category().message(err);
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') text[0] = static_cast<char>(text[0] + 32);
  return text;
}

// --- Queue keys ------------------------------------------------------------------------------

// Reads one queue key (other than `name`) into a QueueSpec; `config` holds the sections read
// before queues (host groups).
using QueueKeyReader = Status (*)(const Reader&, const Field&, const ClusterConfig&, QueueSpec&);

struct QueueKey {
  std::string_view key;
  QueueKeyReader read;
};

Status ReadWindows(const Reader& r, const Field& f, const ClusterConfig&, QueueSpec& q) {
  if (!f.node.IsSequence()) return r.Expected(f, "a list of \"hh:mm-hh:mm\" windows");
  Result<std::vector<Field>> items = r.ListItems(f);
  if (!items) return items.error();
  q.windows.clear();
  for (const Field& item : *items) {
    if (!item.node.IsScalar()) return r.Expected(item, "a window \"hh:mm-hh:mm\"");
    const std::string& text = item.node.Scalar();
    const Status valid = core::DispatchWindows::Check(text);  // the core's own syntax
    if (!valid.ok()) return r.Error(item, valid.message());
    q.windows.push_back(text);
  }
  return Status::Ok();
}

// `fairshare: {alice: 3, bob: 1, default: 1}`: a positive number of shares per user name;
// `default` applies to users not listed.
Status ReadFairshare(const Reader& r, const Field& f, const ClusterConfig&, QueueSpec& q) {
  if (!f.node.IsMap()) return r.Expected(f, "a map of user: shares");
  Result<std::vector<Entry>> entries = r.MapEntries(f);
  if (!entries) return entries.error();
  q.fairshare.clear();
  for (const Entry& e : *entries) {
    const Field& v = e.value;
    double shares = 0;
    const std::string text = v.node.IsScalar() && !IsStringTagged(v.node) ? v.node.Scalar() : "";
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), shares);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
        !std::isfinite(shares)) {
      return r.Expected(v, "a number of shares");
    }
    if (shares <= 0) return r.Error(v, Clip(text) + " <= 0 (shares must be positive)");
    q.fairshare[e.key] = shares;
  }
  return Status::Ok();
}

// What a GPU-second costs in fairshare usage, in slot-seconds: a finite number >= 0.
Status ReadGpuWeight(const Reader& r, const Field& f, const ClusterConfig&, QueueSpec& q) {
  const std::string text = f.node.IsScalar() && !IsStringTagged(f.node) ? f.node.Scalar() : "";
  double weight = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), weight);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(weight) || weight < 0) {
    return r.Expected(f, "a number >= 0 (slot-seconds per GPU-second)");
  }
  q.fairshare_gpu_weight = weight;
  return Status::Ok();
}

// A duration of at least one second (a half-life of 0 would divide by zero).
Status ReadHalfLife(const Reader& r, const Field& f, const ClusterConfig&, QueueSpec& q) {
  return Assign(r.ReadInt<Duration>(f, 1), q.fairshare_half_life);
}

// A request that parses and names only resources the hosts or shared_resources define.
Status ReadDefaultResreq(const Reader& r, const Field& f, const ClusterConfig& config,
                         QueueSpec& q) {
  SLUICE_RETURN_IF_ERROR(Assign(r.ReadString(f), q.default_resreq));
  if (q.default_resreq.empty()) return Status::Ok();
  core::resreq::ExprPool pool;
  Result<core::resreq::Request> request = core::resreq::Parse(q.default_resreq, pool);
  if (!request) return r.Error(f, request.error().message());
  const Status valid = core::resreq::Validate(*request, pool, core::ResourceCatalogOf(config));
  if (!valid.ok()) return r.Error(f, valid.message());
  return Status::Ok();
}

Status ReadHostGroupRef(const Reader& r, const Field& f, const ClusterConfig& config,
                        QueueSpec& q) {
  Result<std::string> name = r.ReadName(f);
  if (!name) return name.error();
  if (!config.host_groups.contains(*name)) {
    return r.Error(f, "unknown host group " + Quote(*name));
  }
  q.host_group = std::move(*name);
  return Status::Ok();
}

// Reads `f` with the Reader method `Read` into `QueueSpec::*Member`.
template <auto Member, auto Read>
Status ReadInto(const Reader& r, const Field& f, const ClusterConfig&, QueueSpec& q) {
  return Assign((r.*Read)(f), q.*Member);
}

// Reads `f` with `Read` into `QueueSpec::predictive.*Member` (predictive_backfill knobs).
template <auto Member, auto Read>
Status ReadKnob(const Reader& r, const Field& f, const ClusterConfig&, QueueSpec& q) {
  return Assign((r.*Read)(f), q.predictive.*Member);
}

constexpr QueueKey kQueueKeys[] = {
    {"priority", &ReadInto<&QueueSpec::priority, &Reader::ReadPriority>},
    {"policy", &ReadInto<&QueueSpec::policy, &Reader::ReadPolicy>},
    {"max_bypass", &ReadInto<&QueueSpec::max_bypass, &Reader::ReadCount<int32_t>>},
    {"max_head_wait", &ReadInto<&QueueSpec::max_head_wait, &Reader::ReadCount<Duration>>},
    {"history_runs", &ReadKnob<&core::PredictiveKnobs::history_runs, &Reader::ReadHistoryRuns>},
    {"backfill_order", &ReadKnob<&core::PredictiveKnobs::order, &Reader::ReadBackfillOrder>},
    {"age_after", &ReadKnob<&core::PredictiveKnobs::age_after, &Reader::ReadCount<Duration>>},
    {"age_limits", &ReadKnob<&core::PredictiveKnobs::age_limits, &Reader::ReadCount<int32_t>>},
    {"history_match", &ReadKnob<&core::PredictiveKnobs::history_match, &Reader::ReadHistoryMatch>},
    {"reserve_after",
     &ReadKnob<&core::PredictiveKnobs::reserve_after, &Reader::ReadCount<Duration>>},
    {"reserve_depth",
     &ReadKnob<&core::PredictiveKnobs::reserve_depth, &Reader::ReadCount<int32_t>>},
    {"reserve_top", &ReadKnob<&core::PredictiveKnobs::reserve_top, &Reader::ReadCount<int32_t>>},
    {"predicted_guard", &ReadKnob<&core::PredictiveKnobs::predicted_guard, &Reader::ReadBool>},
    {"capacity", &ReadInto<&QueueSpec::capacity, &Reader::ReadPercent>},
    {"max_capacity", &ReadInto<&QueueSpec::max_capacity, &Reader::ReadPercent>},
    {"user_limit_pct", &ReadInto<&QueueSpec::user_limit_pct, &Reader::ReadPercent>},
    {"reclaim_after", &ReadInto<&QueueSpec::reclaim_after, &Reader::ReadCount<Duration>>},
    {"run_limit", &ReadInto<&QueueSpec::run_limit, &Reader::ReadCount<int32_t>>},
    {"slot_limit", &ReadInto<&QueueSpec::slot_limit, &Reader::ReadCount<int64_t>>},
    {"hosts", &ReadHostGroupRef},
    {"windows", &ReadWindows},
    {"on_host_loss", &ReadInto<&QueueSpec::on_host_loss, &Reader::ReadOnHostLoss>},
    {"submit_users", &ReadInto<&QueueSpec::submit_users, &Reader::ReadNameList>},
    {"default_resreq", &ReadDefaultResreq},
    {"open", &ReadInto<&QueueSpec::open, &Reader::ReadBool>},
    {"active", &ReadInto<&QueueSpec::active, &Reader::ReadBool>},
    {"fairshare", &ReadFairshare},
    {"fairshare_half_life", &ReadHalfLife},
    {"fairshare_gpu_weight", &ReadGpuWeight},
    {"preemptive", &ReadInto<&QueueSpec::preemptive, &Reader::ReadBool>},
    {"preemptable", &ReadInto<&QueueSpec::preemptable, &Reader::ReadBool>},
    {"preempt_grace", &ReadInto<&QueueSpec::preempt_grace, &Reader::ReadCount<Duration>>},
};

const QueueKey* FindQueueKey(std::string_view key) {
  for (const QueueKey& k : kQueueKeys) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

// A queue being read, with where each of its settings was written, for cross-field errors.
struct QueueDraft {
  struct Origin {
    int line = 1;
    bool inherited = false;  // from queue_defaults
  };
  QueueSpec spec;
  std::string path;
  int line = 1;
  std::map<std::string, Origin, std::less<>> origins;
};

// --- Limit scopes ----------------------------------------------------------------------------

enum class Dimension { kUsers, kQueues, kHosts, kProjects };

struct ScopeKey {
  std::string_view key;
  Dimension dimension;
  bool per_each;
};

constexpr ScopeKey kScopeKeys[] = {
    {"per_user", Dimension::kUsers, true},       {"users", Dimension::kUsers, false},
    {"per_queue", Dimension::kQueues, true},     {"queues", Dimension::kQueues, false},
    {"per_host", Dimension::kHosts, true},       {"hosts", Dimension::kHosts, false},
    {"per_project", Dimension::kProjects, true}, {"projects", Dimension::kProjects, false},
};

LimitScope& ScopeOf(LimitSpec& spec, Dimension dimension) {
  switch (dimension) {
    case Dimension::kUsers:
      return spec.users;
    case Dimension::kQueues:
      return spec.queues;
    case Dimension::kHosts:
      return spec.hosts;
    case Dimension::kProjects:
      break;
  }
  return spec.projects;
}

// --- The parser ------------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(std::string_view filename) : reader_(filename) {}

  // Steps: 1. check the top level is a map of known sections (ReadSections); 2. read each
  // section in dependency order; 3. default and sum the capacities (FinishQueues).
  Result<ClusterConfig> Parse(const YAML::Node& root);
  const AuthConfig& auth() const { return auth_; }

 private:
  using Section = Status (Parser::*)(const Field&);
  struct SectionStep {
    std::string_view key;
    Section read;
  };
  static const SectionStep kSections[];

  Status ReadHosts(const Field& f);
  Status ReadHost(const Field& f);
  Status ReadHostKey(const Entry& e, HostSpec& spec);
  Status ReadHostGroups(const Field& f);
  Status ReadSharedResources(const Field& f);
  Status ReadQueueDefaults(const Field& f);
  Status ReadQueues(const Field& f);
  Status ReadQueue(const Field& f);
  Status ReadQueueKey(const Entry& e, bool inherited, QueueDraft& draft) const;
  Status QueueError(const QueueDraft& draft, std::string_view key, std::string_view what) const;
  Status FinishQueues(const Field& queues);
  Status ReadDefaultQueue(const Field& f);
  Status ReadLimits(const Field& f);
  Status ReadLimit(const Field& f);
  Status ReadLimitScope(const Field& f, const ScopeKey& scope_key, LimitScope& scope);
  Status AddScopeHosts(const Field& item, std::set<std::string, std::less<>>& seen,
                       std::vector<std::string>& hosts);
  Status ReadResourceMap(const Field& f, bool shared, std::map<std::string, int64_t>& out);
  Status ReadAuth(const Field& f) { return yaml::ReadAuth(reader_, f, auth_); }
  Status ReadQuotas(const Field& f) {
    return yaml::ReadQuotas(reader_, f, queue_names_, auth_.quotas);
  }
  Status ReadJobs(const Field& f) { return yaml::ReadJobs(reader_, f, auth_.jobs); }
  Status ReadReservations(const Field& f) {
    return yaml::ReadReservationPolicy(reader_, f, auth_.user_reservations);
  }
  Status ReadHealthDefault(const Field& f) {
    return Assign(yaml::ReadHealthCheck(reader_, f), auth_.health.all);
  }

  Reader reader_;
  ClusterConfig config_;
  std::map<std::string, int, std::less<>> host_lines_;  // host name -> line it is defined on
  std::set<std::string, std::less<>> host_resources_;   // defined on at least one host
  std::set<std::string, std::less<>> queue_names_;
  std::set<std::string, std::less<>> limit_names_;
  QueueDraft defaults_;
  std::vector<QueueDraft> queues_;
  AuthConfig auth_;
};

const Parser::SectionStep Parser::kSections[] = {
    {"hosts", &Parser::ReadHosts},
    {"host_groups", &Parser::ReadHostGroups},
    {"shared_resources", &Parser::ReadSharedResources},
    {"queue_defaults", &Parser::ReadQueueDefaults},
    {"queues", &Parser::ReadQueues},
    {"default_queue", &Parser::ReadDefaultQueue},
    {"limits", &Parser::ReadLimits},
    {"auth", &Parser::ReadAuth},
    {"quotas", &Parser::ReadQuotas},  // after queues: names them
    {"jobs", &Parser::ReadJobs},
    {"reservations", &Parser::ReadReservations},
    {"health_check", &Parser::ReadHealthDefault},
};

Result<ClusterConfig> Parser::Parse(const YAML::Node& root) {
  // 1. The top level: a map (or an empty document) of known sections.
  const Field top{root, "", LineOf(root, 1)};
  if (!root.IsNull() && !root.IsMap()) {
    return reader_.Error(top.line, "(top level)",
                         "expected a map of sections, got " + Describe(root));
  }
  Result<std::vector<Entry>> entries = reader_.MapEntries(top);
  if (!entries) return entries.error();
  std::map<std::string_view, const Field*> sections;
  for (const Entry& e : *entries) {
    const bool known = std::any_of(std::begin(kSections), std::end(kSections),
                                   [&](const SectionStep& s) { return s.key == e.key; });
    if (!known) return reader_.Error(e.key_line, e.value.path, "unknown key");
    sections[e.key] = &e.value;
  }
  // 2. Each section, in dependency order.
  for (const SectionStep& step : kSections) {
    auto it = sections.find(step.key);
    if (it != sections.end()) SLUICE_RETURN_IF_ERROR((this->*step.read)(*it->second));
  }
  // 3. Capacities across queues.
  auto queues = sections.find("queues");
  const Field missing{YAML::Node(), "queues", 1};
  SLUICE_RETURN_IF_ERROR(FinishQueues(queues == sections.end() ? missing : *queues->second));
  return std::move(config_);
}

// --- Hosts -----------------------------------------------------------------------------------

Status Parser::ReadHosts(const Field& f) {
  Result<std::vector<Field>> items = reader_.ListItems(f);
  if (!items) return items.error();
  for (const Field& item : *items) SLUICE_RETURN_IF_ERROR(ReadHost(item));
  return Status::Ok();
}

Status Parser::ReadHost(const Field& f) {
  if (!f.node.IsMap()) return reader_.Expected(f, "a map of host settings");
  Result<std::vector<Entry>> entries = reader_.MapEntries(f);
  if (!entries) return entries.error();
  HostSpec spec;
  const Field* name = nullptr;
  std::optional<std::optional<core::HealthCheck>> health;  // its own `health_check`, if set
  for (const Entry& e : *entries) {
    if (e.key == "name") {
      name = &e.value;
    } else if (e.key == "health_check") {
      SLUICE_RETURN_IF_ERROR(Assign(yaml::ReadHealthCheck(reader_, e.value), health));
    } else {
      SLUICE_RETURN_IF_ERROR(ReadHostKey(e, spec));
    }
  }
  SLUICE_RETURN_IF_ERROR(yaml::ReadHostGpus(reader_, *entries, spec));  // needs `resources`
  if (name == nullptr) return reader_.Error(f, "missing required key 'name'");
  Result<std::vector<std::string>> names = reader_.ExpandHosts(*name);
  if (!names) return names.error();
  // Each expanded host copies the settings too; charge them so one line cannot explode.
  const size_t settings = spec.resources.size() + spec.attributes.size() + spec.tags.size() +
                          yaml::GpuCost(spec.gpus) + (health ? size_t{1} : size_t{0});
  SLUICE_RETURN_IF_ERROR(reader_.Charge(*name, names->size() * settings));
  for (std::string& host : *names) {
    const auto [it, inserted] = host_lines_.emplace(host, name->line);
    if (!inserted) {
      return reader_.Error(*name, "duplicate host " + Quote(host) + " (first defined on line " +
                                      std::to_string(it->second) + ")");
    }
    if (health) auth_.health.hosts[host] = *health;
    spec.name = std::move(host);
    config_.hosts.push_back(spec);
  }
  for (const auto& [resource, amount] : spec.resources) host_resources_.insert(resource);
  return Status::Ok();
}

Status Parser::ReadHostKey(const Entry& e, HostSpec& spec) {
  const Field& f = e.value;
  if (e.key == "slots") return Assign(reader_.ReadInt<int32_t>(f, 0), spec.slots);
  if (e.key == "resources") return ReadResourceMap(f, /*shared=*/false, spec.resources);
  if (e.key == "tags") return Assign(reader_.ReadNameList(f), spec.tags);
  if (yaml::IsHostGpuKey(e.key)) return Status::Ok();  // ReadHost reads them after the others
  if (e.key == "state") {
    return Assign(reader_.ReadChoice(f, &core::ParseHostState, "ok, closed, unavail, draining"),
                  spec.state);
  }
  if (e.key == "attributes") {
    Result<std::vector<Entry>> attributes = reader_.MapEntries(f);
    if (!attributes) return attributes.error();
    for (const Entry& a : *attributes) {
      SLUICE_RETURN_IF_ERROR(Assign(reader_.ReadString(a.value), spec.attributes[a.key]));
    }
    return Status::Ok();
  }
  return reader_.Error(e.key_line, f.path, "unknown key");
}

// A map resource name -> non-negative amount. Names are identifiers other than limit keys; a
// shared resource may not reuse a host resource's name (requests and limits could not tell
// them apart).
Status Parser::ReadResourceMap(const Field& f, bool shared, std::map<std::string, int64_t>& out) {
  Result<std::vector<Entry>> entries = reader_.MapEntries(f);
  if (!entries) return entries.error();
  for (const Entry& e : *entries) {
    if (!IsIdentifier(e.key)) {
      return reader_.Error(e.key_line, e.value.path,
                           "a resource name is letters, digits and '_', not starting with a digit");
    }
    if (IsReservedResourceName(e.key)) {
      return reader_.Error(e.key_line, e.value.path, "reserved word, not a resource name");
    }
    if (shared && host_resources_.contains(e.key)) {
      return reader_.Error(e.key_line, e.value.path, "already a host resource");
    }
    SLUICE_RETURN_IF_ERROR(Assign(reader_.ReadInt<int64_t>(e.value, 0), out[e.key]));
  }
  return Status::Ok();
}

Status Parser::ReadHostGroups(const Field& f) {
  Result<std::vector<Entry>> groups = reader_.MapEntries(f);
  if (!groups) return groups.error();
  for (const Entry& group : *groups) {
    if (host_lines_.contains(group.key)) {
      return reader_.Error(group.key_line, group.value.path, "group name is also a host name");
    }
    if (!group.value.node.IsSequence()) return reader_.Expected(group.value, "a list of hosts");
    Result<std::vector<Field>> items = reader_.ListItems(group.value);
    if (!items) return items.error();
    std::vector<std::string>& members = config_.host_groups[group.key];
    std::set<std::string, std::less<>> seen;
    for (const Field& item : *items) {
      Result<std::vector<std::string>> names = reader_.ExpandHosts(item);
      if (!names) return names.error();
      for (std::string& host : *names) {
        if (!host_lines_.contains(host)) return reader_.Error(item, "unknown host " + Quote(host));
        if (!seen.insert(host).second) {
          return reader_.Error(item, "host " + Quote(host) + " listed twice");
        }
        members.push_back(std::move(host));
      }
    }
  }
  return Status::Ok();
}

Status Parser::ReadSharedResources(const Field& f) {
  return ReadResourceMap(f, /*shared=*/true, config_.shared_resources);
}

// --- Queues ----------------------------------------------------------------------------------

Status Parser::ReadQueueDefaults(const Field& f) {
  if (!f.node.IsNull() && !f.node.IsMap()) return reader_.Expected(f, "a map of queue settings");
  Result<std::vector<Entry>> entries = reader_.MapEntries(f);
  if (!entries) return entries.error();
  for (const Entry& e : *entries) {
    if (e.key == "name") {
      return reader_.Error(e.key_line, e.value.path, "a queue name has no default");
    }
    SLUICE_RETURN_IF_ERROR(ReadQueueKey(e, /*inherited=*/true, defaults_));
  }
  return Status::Ok();
}

Status Parser::ReadQueues(const Field& f) {
  Result<std::vector<Field>> items = reader_.ListItems(f);
  if (!items) return items.error();
  for (const Field& item : *items) SLUICE_RETURN_IF_ERROR(ReadQueue(item));
  return Status::Ok();
}

Status Parser::ReadQueue(const Field& f) {
  if (!f.node.IsMap()) return reader_.Expected(f, "a map of queue settings");
  Result<std::vector<Entry>> entries = reader_.MapEntries(f);
  if (!entries) return entries.error();
  QueueDraft draft = defaults_;
  draft.path = f.path;
  draft.line = f.line;
  bool named = false;
  for (const Entry& e : *entries) {
    if (e.key != "name") {
      SLUICE_RETURN_IF_ERROR(ReadQueueKey(e, /*inherited=*/false, draft));
      continue;
    }
    SLUICE_RETURN_IF_ERROR(Assign(reader_.ReadName(e.value), draft.spec.name));
    if (!queue_names_.insert(draft.spec.name).second) {
      return reader_.Error(e.value, "duplicate queue " + Quote(draft.spec.name));
    }
    named = true;
  }
  if (!named) return reader_.Error(f, "missing required key 'name'");
  const QueueSpec& spec = draft.spec;
  if (spec.capacity && spec.max_capacity < *spec.capacity) {
    return QueueError(
        draft, "max_capacity",
        FormatNumber(spec.max_capacity) + " < capacity " + FormatNumber(*spec.capacity));
  }
  queues_.push_back(std::move(draft));
  return Status::Ok();
}

Status Parser::ReadQueueKey(const Entry& e, bool inherited, QueueDraft& draft) const {
  const QueueKey* key = FindQueueKey(e.key);
  if (key == nullptr) return reader_.Error(e.key_line, e.value.path, "unknown key");
  SLUICE_RETURN_IF_ERROR(key->read(reader_, e.value, config_, draft.spec));
  draft.origins[e.key] = QueueDraft::Origin{.line = e.value.line, .inherited = inherited};
  return Status::Ok();
}

// An error about the queue's effective `key`, located where its value was written.
Status Parser::QueueError(const QueueDraft& draft, std::string_view key,
                          std::string_view what) const {
  auto origin = draft.origins.find(key);
  const int line = origin == draft.origins.end() ? draft.line : origin->second.line;
  std::string message(what);
  if (origin != draft.origins.end() && origin->second.inherited) {
    message += " (from queue_defaults)";
  }
  return reader_.Error(line, ChildPath(draft.path, key), message);
}

// Once every queue is read: when some queue has a capacity, the others get 0 (SPEC §2); the
// guaranteed capacities must then sum to at most 100 + 1e-9.
Status Parser::FinishQueues(const Field& queues) {
  if (queues_.empty()) return reader_.Error(queues, "at least one queue is required");
  const bool capacities = std::any_of(queues_.begin(), queues_.end(),
                                      [](const QueueDraft& d) { return d.spec.capacity; });
  constexpr double kMaxCapacitySum = 100 + 1e-9;
  double sum = 0;
  for (QueueDraft& draft : queues_) {
    if (capacities && !draft.spec.capacity) draft.spec.capacity = 0.0;
    if (draft.spec.capacity) {
      sum += *draft.spec.capacity;
      if (sum > kMaxCapacitySum) {
        return QueueError(draft, "capacity",
                          "guaranteed capacities sum to " + FormatNumber(sum) + " > 100");
      }
    }
    config_.queues.push_back(std::move(draft.spec));
  }
  return Status::Ok();
}

Status Parser::ReadDefaultQueue(const Field& f) {
  SLUICE_RETURN_IF_ERROR(Assign(reader_.ReadName(f), config_.default_queue));
  if (!queue_names_.contains(config_.default_queue)) {
    return reader_.Error(f, "unknown queue " + Quote(config_.default_queue));
  }
  return Status::Ok();
}

// --- Limits ----------------------------------------------------------------------------------

Status Parser::ReadLimits(const Field& f) {
  Result<std::vector<Field>> items = reader_.ListItems(f);
  if (!items) return items.error();
  for (const Field& item : *items) SLUICE_RETURN_IF_ERROR(ReadLimit(item));
  return Status::Ok();
}

Status Parser::ReadLimit(const Field& f) {
  if (!f.node.IsMap()) return reader_.Expected(f, "a map of limit settings");
  Result<std::vector<Entry>> entries = reader_.MapEntries(f);
  if (!entries) return entries.error();
  LimitSpec spec;
  bool named = false;
  std::map<Dimension, std::string_view> scope_keys;  // which key set each dimension
  for (const Entry& e : *entries) {
    const auto* scope = std::find_if(std::begin(kScopeKeys), std::end(kScopeKeys),
                                     [&](const ScopeKey& s) { return s.key == e.key; });
    if (e.key == "name") {
      SLUICE_RETURN_IF_ERROR(Assign(reader_.ReadName(e.value), spec.name));
      if (!limit_names_.insert(spec.name).second) {
        return reader_.Error(e.value, "duplicate limit " + Quote(spec.name));
      }
      named = true;
    } else if (scope != std::end(kScopeKeys)) {
      const auto [it, inserted] = scope_keys.emplace(scope->dimension, scope->key);
      if (!inserted) {
        return reader_.Error(e.key_line, e.value.path, "conflicts with " + std::string(it->second));
      }
      SLUICE_RETURN_IF_ERROR(ReadLimitScope(e.value, *scope, ScopeOf(spec, scope->dimension)));
    } else if (e.key == "slots") {
      SLUICE_RETURN_IF_ERROR(Assign(reader_.ReadInt<int64_t>(e.value, 0), spec.slots));
    } else if (e.key == "jobs") {
      SLUICE_RETURN_IF_ERROR(Assign(reader_.ReadInt<int64_t>(e.value, 0), spec.jobs));
    } else if (host_resources_.contains(e.key) || config_.shared_resources.contains(e.key)) {
      SLUICE_RETURN_IF_ERROR(Assign(reader_.ReadInt<int64_t>(e.value, 0), spec.resources[e.key]));
    } else {
      return reader_.Error(e.key_line, e.value.path,
                           "unknown key (not a scope, slots, jobs or a defined resource)");
    }
  }
  if (!named) return reader_.Error(f, "missing required key 'name'");
  if (!spec.slots && !spec.jobs && spec.resources.empty()) {
    return reader_.Error(f, "limit caps none of slots, jobs or a resource");
  }
  config_.limits.push_back(std::move(spec));
  return Status::Ok();
}

// `all`, or a non-empty list of distinct names; queues must exist, hosts may be hosts, ranges
// or host groups (expanded to defined hosts).
Status Parser::ReadLimitScope(const Field& f, const ScopeKey& scope_key, LimitScope& scope) {
  scope = LimitScope{.set = true, .per_each = scope_key.per_each};
  if (f.node.IsScalar() && !IsStringTagged(f.node) && f.node.Scalar() == "all") {
    return Status::Ok();
  }
  if (!f.node.IsSequence() || f.node.size() == 0) {
    return reader_.Expected(f, "'all' or a non-empty list of names");
  }
  Result<std::vector<std::string>> names = reader_.ReadNameList(f);
  if (!names) return names.error();
  Result<std::vector<Field>> items = reader_.ListItems(f);
  if (!items) return items.error();
  std::set<std::string, std::less<>> seen_hosts;
  for (size_t i = 0; i < names->size(); ++i) {
    const std::string& name = (*names)[i];
    const Field& item = (*items)[i];
    if (name == "all") return reader_.Error(item, "'all' must stand alone, not in a list");
    if (scope_key.dimension == Dimension::kHosts) {
      SLUICE_RETURN_IF_ERROR(AddScopeHosts(item, seen_hosts, scope.names));
      continue;
    }
    if (scope_key.dimension == Dimension::kQueues && !queue_names_.contains(name)) {
      return reader_.Error(item, "unknown queue " + Quote(name));
    }
    scope.names.push_back(name);
  }
  return Status::Ok();
}

// Appends the hosts `item` names (a host group, a host or a range) to `hosts`, skipping those
// in `seen` (a group and one of its members may both be listed).
Status Parser::AddScopeHosts(const Field& item, std::set<std::string, std::less<>>& seen,
                             std::vector<std::string>& hosts) {
  std::vector<std::string> names;
  auto group = config_.host_groups.find(item.node.Scalar());
  if (group != config_.host_groups.end()) {
    SLUICE_RETURN_IF_ERROR(reader_.Charge(item, group->second.size()));
    names = group->second;
  } else {
    SLUICE_RETURN_IF_ERROR(Assign(reader_.ExpandHosts(item), names));
  }
  for (std::string& host : names) {
    if (!host_lines_.contains(host)) {
      return reader_.Error(item, "unknown host or host group " + Quote(host));
    }
    if (seen.insert(host).second) hosts.push_back(std::move(host));
  }
  return Status::Ok();
}

// Steps: 1. check there is at most one YAML document (SecondDocumentLine); 2. build it with
// yaml-cpp; 3. read it (Parser::Parse).
Result<ClusterConfig> ParseDocument(std::string_view text, std::string_view filename,
                                    AuthConfig* auth) {
  const std::string document(text);
  if (std::optional<int> line = yaml::SecondDocumentLine(document)) {
    return Reader(filename).Error(*line, "(top level)", "expected one yaml document, got more");
  }
  const YAML::Node root = YAML::Load(document);
  Parser parser(filename);
  Result<ClusterConfig> config = parser.Parse(root);
  if (config && auth != nullptr) *auth = parser.auth();
  return config;
}

}  // namespace

Result<ClusterConfig> ParseClusterConfig(std::string_view text, std::string_view filename,
                                         AuthConfig* auth) {
  const std::string file(filename);
  try {
    return ParseDocument(text, filename, auth);
  } catch (const YAML::Exception& e) {
    std::string what = e.msg.empty() ? "malformed yaml" : e.msg;
    if (what[0] >= 'A' && what[0] <= 'Z') what[0] = static_cast<char>(what[0] + 32);
    const int line = e.mark.is_null() || e.mark.line < 0 ? 1 : e.mark.line + 1;
    return InvalidArgument(file + ":" + std::to_string(line) + ": yaml syntax: " + what);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kResourceExhausted, file + ":1: (top level): out of memory");
  } catch (const std::exception& e) {
    return InvalidArgument(file + ":1: (top level): cannot parse: " + Clip(e.what()));
  }
}

Result<ClusterConfig> LoadClusterConfig(const std::string& path, AuthConfig* auth) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (file == nullptr) return NotFound(path + ": cannot open: " + ErrnoText(errno));
  std::string text;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) text.append(buffer, n);
  if (std::ferror(file.get()) != 0) return NotFound(path + ": cannot read: " + ErrnoText(errno));
  return ParseClusterConfig(text, path, auth);
}

}  // namespace sluice::config
