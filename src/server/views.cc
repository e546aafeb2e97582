#include "server/views.h"

#include "core/admission/diagnostics.h"
#include "core/explain/hint.h"
#include "core/explain/host_detail.h"
#include "core/explain/render.h"
#include "server/job_arrays.h"
#include "server/job_events.h"
#include "server/job_identity.h"
#include "wire/gpu_indexes.h"
#include "wire/reasons_json.h"

namespace sluice::server {

using nlohmann::json;

namespace {

json OptionalTime(const std::optional<Instant>& t) { return t ? json(*t) : json(nullptr); }

json ScopeJson(const core::LimitScope& scope) {
  if (!scope.set) return nullptr;
  return {{"per_each", scope.per_each}, {"names", scope.names}};
}

// The detail's admission section: the stored record, or the core's diagnosis when the core
// holds the job.
json AdmissionJson(const JobInfo& job, const core::ClusterState& state, Instant now, bool waiting) {
  const JobRow& r = job.row;
  json admission = {{"policy", r.policy.str()},
                    {"seq", r.seq},
                    {"bypass_count", r.bypass_count},
                    {"first_blocked", OptionalTime(r.first_blocked)},
                    {"gate_since", OptionalTime(r.gate_since)},
                    {"gate_active", r.gate_since.has_value()},
                    {"phase", job.PhaseText()},
                    {"epoch", r.epoch}};
  const core::Job* cj = job.in_core ? state.FindJob(r.id) : nullptr;
  if (cj == nullptr) return admission;
  core::AdmissionDiagnostics diag = core::Diagnose(*cj, state, now);
  admission["policy"] = core::ToString(diag.policy);
  admission["seq"] = diag.sequence;
  admission["pending_age"] = waiting ? json(diag.pending_age) : json(nullptr);
  admission["request"] = diag.request;
  admission["classification"] = core::ToString(diag.classification);
  admission["bypass_count"] = diag.bypass_count;
  admission["max_bypass"] = diag.max_bypass;
  admission["first_blocked"] = OptionalTime(diag.first_blocked);
  admission["max_head_wait"] = diag.max_head_wait;
  admission["gate"] = core::ToString(diag.gate);
  admission["gate_since"] = OptionalTime(diag.gate_since);
  admission["gate_active"] = diag.gate == core::GateState::kActive;
  admission["requested_slots"] = diag.requested_slots;
  admission["eligible_slots"] = diag.eligible_slots;
  return admission;
}

}  // namespace

wire::JobListEntry ListEntryOf(const JobInfo& job, const JobBook& book,
                               const core::ClusterState& state, bool with_reasons) {
  const JobRow& r = job.row;
  wire::JobListEntry e{.fixed = job.fixed_text,
                       .id = r.id,
                       .user = job.user,
                       .account = job.account,
                       .queue = job.queue,
                       .state = job.StateText(),
                       .submit_time = r.submit_time,
                       .start_time = r.start_time,
                       .end_time = r.end_time,
                       .exit_code = r.exit_code,
                       .cause = r.cause,
                       .hosts = job.launch().hosts,
                       .dispatch_attempts = r.dispatch_attempts,
                       .cpu_seconds = r.cpu_seconds,
                       .max_rss_mb = r.max_rss_mb,
                       .message = job.message,
                       .steps = r.steps,
                       .with_reasons = with_reasons};
  if (IsArrayParent(job)) {  // R-UX-3
    e.array = book.Spec(job).value("array", "");  // an array's record: few, and it keeps its spec
    e.elements = ElementCounts(state.FindArray(r.id), r.array_states.str());
  }
  for (const auto& [name, slots] : job.launch().hosts) e.tasks += slots;
  if (e.tasks == 0) e.tasks = job.max_tasks;
  e.reason = job.WaitReason();
  if (!e.reason.empty()) e.estimate = book.EstimateOf(job);
  if (with_reasons && !e.reason.empty()) {
    if (job.reasons() != nullptr) e.reasons = *job.reasons();
    // What would let it start (R-PR-2), from the same reasons the JSON shows.
    const core::Job* cj = job.in_core ? state.FindJob(r.id) : nullptr;
    if (cj != nullptr) {
      const core::PendingReasons unexplained{.main = job.state() == JobState::kHeld
                                                         ? core::ReasonCode::kHeld
                                                         : core::ReasonCode::kNewJob};
      e.hint = core::Hint(*cj, state, job.reasons() != nullptr ? *job.reasons() : unexplained);
    }
  }
  return e;
}

json JobJson(const JobInfo& job, const JobBook& book, const core::ClusterState& state, Instant now,
             bool detail) {
  // One source of truth for the job object: the listing's text writer (wire/job_json.h).
  wire::JobListEntry entry = ListEntryOf(job, book, state, detail);
  std::string text;
  wire::AppendJobText(entry, text);
  json j = json::parse(text);
  if (!detail) return j;
  j["admission"] = AdmissionJson(job, state, now, !entry.reason.empty());
  // Requeued (issue 47.6): when it began waiting again, and how often.
  if (const Requeues requeues = RequeuesOf(job.row); requeues.count > 0) {
    j["requeues"] = requeues.count;
    j["queued_time"] = requeues.queued_time;
  }
  if (const json spec = book.Spec(job); spec.contains("script"))
    j["script_bytes"] = spec["script"].get_ref<const std::string&>().size();
  // Per-host verdicts of a waiting job (R-UX-4: `jobs -l`), as `sim --pending-at` shows them.
  const core::Job* cj = job.in_core ? state.FindJob(job.row.id) : nullptr;
  if (cj != nullptr && !entry.reason.empty() && j["reasons"].is_object()) {
    json hosts = json::array();
    for (const core::HostVerdict& v : core::ExplainHosts(*cj, state)) {
      hosts.push_back(json::parse(wire::HostVerdictToJson(v, state).dump()));
    }
    j["reasons"]["hosts"] = std::move(hosts);
  }
  if (entry.reasons && j["reasons"].is_object()) {
    // The `jobs -p` lines (R-PR-2), for readers without the core's renderer (the dashboard).
    json lines = json::array();
    for (const core::ReasonDetail& d : entry.reasons->details)
      lines.push_back(core::RenderReason(d));
    j["reasons"]["text"] = std::move(lines);
    j["reasons"]["headline"] = core::Headline(entry.reasons->main);
  }
  return j;
}

namespace {

// A host's GPUs by index: what is known of each and whether jobs hold it (whole, or shared
// with the memory they reserve).
json GpusJson(const core::Host& host) {
  json gpus = json::array();
  for (uint64_t rest = host.devices.all; rest != 0; rest &= rest - 1) {
    const int32_t index = __builtin_ctzll(rest);
    const uint64_t bit = uint64_t{1} << index;
    json gpu = {{"index", index},
                {"in_use", (host.GpusHeld() & bit) != 0},
                {"shared_mem_mb", (host.gpus_shared & bit) != 0 ? json(host.GpuMemShared(index))
                                                                : json(nullptr)},
                {"model", nullptr},
                {"memory_mb", nullptr},
                {"numa", nullptr},
                {"nvlink", wire::GpuIndexes(host.devices.PeersOf(index))}};
    for (const core::GpuDevice& device : host.spec.gpus) {
      if (device.index != index) continue;
      if (!device.model.empty()) gpu["model"] = device.model;
      if (device.memory_mb > 0) gpu["memory_mb"] = device.memory_mb;
      if (device.numa >= 0) gpu["numa"] = device.numa;
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

}  // namespace

std::string ClosedReason(const AgentView& view) {
  std::string reason;
  if (!view.health_failure.empty()) reason = "health check: " + view.health_failure;
  if (!view.closed_reason.empty()) reason += (reason.empty() ? "" : "; ") + view.closed_reason;
  return reason;
}

void AddClosedReasons(json& job, const std::function<std::string(const std::string&)>& reason_of) {
  auto reasons = job.find("reasons");
  if (reasons == job.end() || !reasons->is_object()) return;
  auto hosts = reasons->find("hosts");
  if (hosts == reasons->end() || !hosts->is_array()) return;
  const std::string closed(core::ToString(core::ReasonCode::kHostClosed));
  for (json& verdict : *hosts) {
    if (verdict.value("code", "") != closed || !verdict.contains("host")) continue;
    if (std::string reason = reason_of(verdict["host"].get<std::string>()); !reason.empty()) {
      verdict["reason"] = std::move(reason);
    }
  }
}

json HostJson(const core::Host& host, const core::Topology& topology, const AgentView& view) {
  json agent = {{"connected", false}, {"last_heartbeat", nullptr}};
  if (view.registered) {
    agent = {{"connected", view.connected}, {"last_heartbeat", view.last_heartbeat_ms / 1000}};
    if (view.restarting) agent["restarting"] = true;
  }
  json out = {{"name", host.spec.name},
              {"state", core::ToString(host.spec.state)},
              {"slots", host.spec.slots},
              {"used_slots", host.used_slots},
              {"running_jobs", host.running_jobs},
              {"resources", host.spec.resources},
              {"used_resources", json::object()},
              {"attributes", host.spec.attributes},
              {"tags", host.spec.tags},
              {"agent", agent}};
  for (const auto& [name, total] : host.spec.resources) {
    const auto id = topology.FindHostResource(name);
    out["used_resources"][name] = id ? host.ResourceUsed(*id) : 0;
  }
  if (host.devices.all != 0) out["gpus"] = GpusJson(host);  // R-GPU-4
  if (std::string reason = ClosedReason(view); !reason.empty()) out["reason"] = std::move(reason);
  if (!view.health_failure.empty()) out["health_failure"] = view.health_failure;
  // As its agent last reported it (issue 47.9, `lsload`); null until it has.
  out["load"] = nullptr;
  if (view.load) {
    out["load"] = {{"r1m", view.load->r1m},
                   {"r5m", view.load->r5m},
                   {"r15m", view.load->r15m},
                   {"mem_available_mb", view.load->mem_available_mb < 0
                                            ? json(nullptr)
                                            : json(view.load->mem_available_mb)}};
  }
  return out;
}

json QueueJson(const core::Queue& queue, const JobCounts& counts) {
  const auto count = [&](const char* state) -> int64_t {
    auto it = counts.by_state.find({state, queue.spec.name});
    return it == counts.by_state.end() ? 0 : it->second;
  };
  const int64_t pending = count("PENDING");
  const int64_t held = count("HELD");
  const core::QueueSpec& q = queue.spec;
  return {{"name", q.name},
          {"priority", q.priority},
          {"policy", core::ToString(q.policy)},
          {"open", q.open},
          {"active", q.active},
          {"pending", pending},
          {"held", held},
          {"running", queue.running_jobs},
          {"used_slots", queue.used_slots},
          {"max_bypass", q.max_bypass},
          {"max_head_wait", q.max_head_wait},
          {"on_host_loss", core::ToString(q.on_host_loss)},
          {"submit_users", q.submit_users ? json(*q.submit_users) : json(nullptr)},
          // Capacity and limits (R-CAP-1, R-Q-2), for the dashboard's Queues page.
          {"capacity", q.capacity ? json(*q.capacity) : json(nullptr)},
          {"max_capacity", q.max_capacity},
          {"user_limit_pct", q.user_limit_pct},
          {"run_limit", q.run_limit ? json(*q.run_limit) : json(nullptr)},
          {"slot_limit", q.slot_limit ? json(*q.slot_limit) : json(nullptr)},
          {"host_group", q.host_group},
          {"windows", q.windows},
          {"preemptive", q.preemptive},
          {"preemptable", q.preemptable}};
}

json LimitsJson(const core::ClusterState& state) {
  json out = json::array();
  for (const core::LimitSpec& l : state.config().limits) {
    out.push_back({{"name", l.name},
                   {"slots", l.slots ? json(*l.slots) : json(nullptr)},
                   {"jobs", l.jobs ? json(*l.jobs) : json(nullptr)},
                   {"resources", l.resources},
                   {"users", ScopeJson(l.users)},
                   {"queues", ScopeJson(l.queues)},
                   {"hosts", ScopeJson(l.hosts)},
                   {"projects", ScopeJson(l.projects)}});
  }
  return out;
}

}  // namespace sluice::server
