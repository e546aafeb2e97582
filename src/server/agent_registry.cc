#include "server/agent_registry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <iterator>
#include <set>
#include <string_view>
#include <utility>

#include "base/array_ids.h"
#include "server/job_arrays.h"
#include "server/job_changes.h"
#include "server/job_identity.h"
#include "server/job_spec.h"
#include "server/job_usage.h"
#include "server/job_variables.h"
#include "wire/gpu_indexes.h"
#include "wire/output_pattern.h"
#include "wire/protocol_version.h"

namespace sluice::server {

using nlohmann::json;

namespace {

// %j/%J, %A, %a/%I (R-UX-3, job_arrays.h).
std::string ReplaceJobId(const std::string& text, JobId id) {
  return wire::ExpandOutputPattern(text, id);
}

// A job's name when it has none: its command's first word, without its directory (bsub's
// default name is the command, Slurm's the script's name).
std::string CommandName(const json& command) {
  std::string first = command.is_array() && !command.empty() && command[0].is_string()
                          ? command[0].get<std::string>()
                          : CommandText(command);
  first = first.substr(0, first.find(' '));
  const size_t slash = first.rfind('/');
  return slash == std::string::npos ? first : first.substr(slash + 1);
}

// Whether `e`, from host `name`, is the end of the run `job` lost with that host, and the job
// has not run since: it waits requeued, or its next launch went to that same host, whose agent
// does not start a job while it holds an unacknowledged exit of it (agent.cc, MayLaunch). A
// run this leader did not number (restored, or an agent that echoes none) is taken as that
// run: nothing else of the job ran there since. A fenced run is not an end (its agent killed
// it): the requeue stands.
bool EndsLostRun(const JobInfo& job, const std::string& name, const wire::ExitReport& e) {
  if (job.launch().lost_host.empty() || job.launch().lost_host != name || job.row.cancel_requested)
    return false;
  const bool waits = job.phase() == core::AdmissionPhase::kPending;
  const bool relaunched_here =
      job.phase() == core::AdmissionPhase::kAdmitting && job.launch().launch_host == name;
  if (!waits && !relaunched_here) return false;
  if (e.cause == wire::ExitCause::kFenced) return false;
  return e.run == 0 || job.launch().lost_run == 0 || e.run == job.launch().lost_run;
}

// Why a host the configuration dropped while it ran jobs is closed (GET /v1/hosts `reason`,
// pending jobs' per-host reasons).
constexpr const char* kDrainingReason = "removed from the configuration; drains";

}  // namespace

// --- Registration -------------------------------------------------------------------------------

AgentRegistry::Agent& AgentRegistry::Entry(const std::string& host) {
  auto& agent = agents_[host];
  if (!agent) agent = std::make_unique<Agent>();
  return *agent;
}

Result<json> AgentRegistry::Register(const Registration& reg, MutexLock& lock) {
  if (reg.epoch > ctx_.writes().epoch()) return FailedPrecondition("stale epoch");
  // On a full disk (issue 19) configured hosts still register: their rows are rewritten by
  // the resync, and their agents keep their leases, so running jobs go on.
  const bool read_only = !ctx_.writes().Writable();
  if (read_only && !(ctx_.writes().DiskFault() && !ctx_.writes().deposed())) {
    return Status(StatusCode::kUnavailable, "the store cannot be written now");
  }
  const std::string& name = reg.host.name;
  store::WriteBatch batch;
  SLUICE_RETURN_IF_ERROR(CheckClaim(reg));
  if (auto index = ctx_.state().topology().FindHost(name); !index || Gone(name)) {
    if (read_only) {
      return Status(StatusCode::kUnavailable,
                    "host " + name + " cannot be added now: " + ctx_.writes().Fault());
    }
    core::HostSpec added = reg.host;
    added.state = core::HostState::kUnavail;
    if (reg.gpus && !reg.gpus->devices.empty()) {
      // A host its agent adds is as the agent describes it, GPUs included; later
      // registrations keep them up to date as for `gpus: auto`.
      added.gpus = reg.gpus->devices;
      added.gpus_auto = true;
      added.resources["gpu"] = static_cast<int64_t>(added.gpus.size());
    }
    Status s = ctx_.ApplyLocked(core::HostAdded{added}, "");
    if (!s.ok()) return InvalidArgument(s.message());
    batch.hosts.push_back(settings_.AddAgentHost(added));
    ctx_.log().info("host {}: added by its agent ({} slots)", name, reg.host.slots);
  } else {
    const core::HostSpec& have = ctx_.state().topology().hosts()[*index].spec;
    if (have.slots != reg.host.slots || have.resources != reg.host.resources) {
      ctx_.log().warn("host {}: agent flags differ from the configuration; the configuration wins",
                      name);
    }
  }
  if (reg.gpus) ApplyDetectedGpus(name, *reg.gpus, batch);
  Agent& agent = Entry(name);
  const bool was_registered = agent.registered;
  agent.instance = reg.instance;
  agent.registered = true;
  agent.unavail = false;
  agent.loss_handled = false;
  agent.last_heartbeat_ms = ctx_.NowMs();
  ++agent.poll_generation;
  agent.collected_ms = Agent::kNever;  // its next batched poll looks at its jobs at once
  agent.unlisted.clear();
  agent.restarting = false;
  const std::set<JobId> expected = book_.LaunchedBy(name);
  for (JobId id : expected) {
    JobInfo* job = book_.Find(id);
    if (job == nullptr) continue;
    if (!reg.running.contains(id)) {
      agent.unlisted.insert(id);
    } else if (job->phase() == core::AdmissionPhase::kAdmitting) {
      book_.ConfirmRunning(*job, "(reported at registration)", batch);
    }
  }
  ctx_.log().info("host {}: agent {} (epoch {}, {} running)", name,
                  was_registered ? "re-registered" : "registered", ctx_.writes().epoch(),
                  reg.running.size());
  signal_orders_.erase(name);  // for runs that did not survive, or a later run of the job
  // Steps do not survive their agent's restart or fence (the agent kills them): their clients
  // are told now rather than waiting forever (R-LAUNCH-1).
  if (steps_ != nullptr) {
    steps_->FailHost(name, "the agent of host " + name +
                               " registered again (it restarted or "
                               "lost the controller); the step is gone");
  }
  if (reg.health) ApplyHealth(name, *reg.health);
  SyncHostState(name);
  ctx_.cycle().MarkDirty();
  ctx_.wakeups().WakeAll();
  if (!batch.empty() && !read_only) {
    SLUICE_RETURN_IF_ERROR(ctx_.writes().WriteAndWait(lock, std::move(batch)));
  }
  json reply = {{"epoch", ctx_.writes().epoch()},
                {"lease_seconds", ctx_.options().lease_ms / 1000},
                {"absence_seconds", ctx_.options().AbsenceMs() / 1000},
                {"heartbeat_ms", ctx_.options().heartbeat_ms},
                {"protocol", wire::ToString(wire::kProtocolVersion)}};  // R-OPS-5
  if (auto check = settings_.HealthCheckFor(name)) {
    reply["health_check"] = wire::EncodeHealthCheck(check);  // R-OPS-4
  }
  return reply;
}

Status AgentRegistry::CheckClaim(const Registration& reg) const {
  const std::string& name = reg.host.name;
  // A host the configuration dropped is out as if it had never been listed (a restart
  // forgets it).
  const bool listed = ctx_.state().topology().FindHost(name) && !Gone(name);
  if (!listed && !settings_.allow_dynamic_hosts()) {
    return Status(StatusCode::kPermissionDenied,
                  "host " + name +
                      " is not in the cluster configuration (agents may add hosts "
                      "only with auth.allow_dynamic_hosts: true)");
  }
  auto it = agents_.find(name);
  if (it != agents_.end() && Live(name) && it->second->instance != reg.instance) {
    const int64_t silent_ms = ctx_.NowMs() - it->second->last_heartbeat_ms;
    return Status(StatusCode::kAlreadyExists,
                  "host " + name + " is served by another connected agent (last heard " +
                      std::to_string(silent_ms) + " ms ago); a second agent may take it once " +
                      "the first's lease (" + std::to_string(ctx_.options().lease_ms / 1000) +
                      " s) has expired");
  }
  return Status::Ok();
}

// --- Detected GPUs (R-GPU-1) ---------------------------------------------------------------------

namespace {

// How the agent looked, as the reasons say it.
std::string ProbeText(const wire::GpuReport& report) {
  switch (report.probe) {
    case wire::GpuProbe::kNvidiaSmi:
      return "nvidia-smi";
    case wire::GpuProbe::kNoNvidiaSmi:
      return "no nvidia-smi";
    case wire::GpuProbe::kFailed:
      return "nvidia-smi failed: " + report.error.substr(0, 200);
  }
  return "";
}

int64_t ConfiguredGpus(const core::HostSpec& spec) {
  auto count = spec.resources.find("gpu");
  return count == spec.resources.end() ? 0 : count->second;
}

// Whether a configured model names the detected (short) one: the same ignoring case, or a
// longer name of it ("A100-SXM4-40GB" configured, "A100" detected).
bool SameGpuModel(std::string_view configured, std::string_view detected) {
  if (configured.size() < detected.size()) return false;
  for (size_t i = 0; i < detected.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(configured[i])) !=
        std::tolower(static_cast<unsigned char>(detected[i]))) {
      return false;
    }
  }
  return configured.size() == detected.size() || configured[detected.size()] == '-' ||
         configured[detected.size()] == ' ';
}

// Why the detected GPUs contradict the configured ones ("" when they agree): another count, a
// configured index not detected, or another model at an index where both are known. Memory
// is not compared: nvidia-smi gives the usable MiB (81559 on an "80G" H100).
std::string GpuMismatch(const core::HostSpec& configured, const wire::GpuReport& report) {
  const int64_t want = ConfiguredGpus(configured);
  const auto got = static_cast<int64_t>(report.devices.size());
  const std::string how = " (" + ProbeText(report) + ")";
  if (want != got) {
    return "GPUs: configured " + std::to_string(want) + ", detected " +
           (got == 0 ? std::string("none") : std::to_string(got)) + how;
  }
  for (const core::GpuDevice& device : configured.gpus) {
    auto found = std::find_if(report.devices.begin(), report.devices.end(),
                              [&](const core::GpuDevice& d) { return d.index == device.index; });
    if (found == report.devices.end()) {
      return "GPUs: configured GPU " + std::to_string(device.index) + ", not detected" + how;
    }
    if (!device.model.empty() && !found->model.empty() &&
        !SameGpuModel(device.model, found->model)) {
      return "GPUs: configured " + device.model + " at index " + std::to_string(device.index) +
             ", detected " + found->model + how;
    }
  }
  return "";
}

}  // namespace

void AgentRegistry::ApplyDetectedGpus(const std::string& name, const wire::GpuReport& report,
                                      store::WriteBatch& batch) {
  auto index = ctx_.state().topology().FindHost(name);
  if (!index) return;
  const core::HostSpec& have = ctx_.state().topology().hosts()[*index].spec;
  if (have.gpus_auto) {
    AdoptGpus(have, report, batch);
    return;
  }
  if (ConfiguredGpus(have) == 0) {
    // Never closed for GPUs it was not meant to have: it stays a host without them.
    if (!report.devices.empty()) {
      ctx_.log().info(
          "host {}: its agent detected {} GPUs the configuration does not declare "
          "(`gpus: auto` would use them)",
          name, report.devices.size());
    }
    return;
  }
  const std::string mismatch = GpuMismatch(have, report);
  if (!mismatch.empty()) CloseForGpus(name, mismatch, batch);
}

void AgentRegistry::AdoptGpus(const core::HostSpec& have, const wire::GpuReport& report,
                              store::WriteBatch& batch) {
  const std::string name = have.name;  // `have` is the core's: reconfiguring replaces it
  if (report.devices.empty()) {
    ctx_.log().warn(
        "host {}: `gpus: auto`, but its agent detected none ({}); it has no GPUs "
        "until its agent detects some",
        name, ProbeText(report));
  }
  if (have.gpus == report.devices && ConfiguredGpus(have) == std::ssize(report.devices)) return;
  Result<store::StoredHost> row = settings_.AdoptGpus(name, report.devices, LiveFn());
  if (!row) {
    ctx_.log().error("host {}: the GPUs its agent detected were refused: {}", name,
                     row.error().message());
    return;
  }
  batch.hosts.push_back(std::move(*row));
  std::string models;
  for (const core::GpuDevice& gpu : report.devices) {
    models += (models.empty() ? "" : ", ") + std::to_string(gpu.index) + ":" + gpu.model;
  }
  ctx_.log().info("host {}: {} GPUs detected by its agent ({}) [{}]", name, report.devices.size(),
                  ProbeText(report), models);
}

void AgentRegistry::CloseForGpus(const std::string& name, const std::string& reason,
                                 store::WriteBatch& batch) {
  Agent& agent = Entry(name);
  if (settings_.HostClosed(name)) {
    // Closed already (by an administrator, or by this check before a restart, whose reason
    // was not kept): the reason still explains the host.
    if (agent.closed_reason.empty()) agent.closed_reason = reason;
    return;
  }
  Result<store::WriteBatch> closed = settings_.SetHost(name, "close");
  if (!closed) return;
  for (auto& [key, value] : closed->settings) batch.settings[key] = value;
  agent.closed_reason = reason;
  ctx_.log().warn(
      "host {}: closed by the controller: {} (correct the configuration or the host, "
      "then `sluice host open {}`)",
      name, reason, name);
}

// --- Heartbeat ----------------------------------------------------------------------------------

Result<AgentRegistry::Agent*> AgentRegistry::CheckIn(const std::string& name,
                                                     const std::string& instance, uint64_t epoch) {
  auto found = agents_.find(name);
  if (found == agents_.end() || !found->second->registered) {
    return NotFound("agent " + name + " is not registered in epoch " +
                    std::to_string(ctx_.writes().epoch()));
  }
  if (Gone(name)) {  // dropped idle or drained: registering again, it is refused (CheckClaim)
    found->second->registered = false;
    ctx_.log().info("host {}: no longer in the configuration; its agent is told so", name);
    return NotFound("host " + name + " is no longer in the cluster configuration");
  }
  Agent& agent = *found->second;
  if (epoch > ctx_.writes().epoch()) return FailedPrecondition("stale epoch");
  if (agent.instance != instance) {
    return Status(StatusCode::kAlreadyExists,
                  "host " + name + " is registered by another agent; register first");
  }
  agent.last_heartbeat_ms = ctx_.NowMs();
  if (agent.unavail) {
    agent.unavail = false;
    ctx_.log().info("host {}: agent back", name);
    SyncHostState(name);
  }
  return &agent;
}

Result<json> AgentRegistry::Heartbeat(const std::string& name, const HeartbeatReport& report,
                                      MutexLock& lock) {
  Result<Agent*> checked = CheckIn(name, report.instance, report.epoch);
  if (!checked) return checked.error();
  Agent& agent = **checked;
  if (report.restarting && !agent.restarting) {
    ctx_.log().info(
        "host {}: its agent stops for a restart; its {} job(s) keep running, and are handled by "
        "on_host_loss only if no agent is back within {} s",
        name, report.running.size(),
        (ctx_.options().AbsenceMs() + ctx_.options().host_loss_grace_ms) / 1000);
  }
  agent.restarting = report.restarting;
  const int64_t generation = ++agent.poll_generation;
  ctx_.wakeups().WakeAll();  // an older poll of this agent answers now
  if (report.load) agent.load = *report.load;
  if (report.health) ApplyHealth(name, *report.health);

  // 1. Reports, committed before they are acknowledged.
  store::WriteBatch batch;
  json ack = json::array();
  // Without the store (R-HA-4) reports wait: the agent repeats them until acknowledged.
  if (ctx_.writes().Writable()) {
    ApplyExits(name, report, ack, batch);
    ApplyLaunchFailures(name, report, ack, batch);
    ApplyRunning(name, agent, report, batch);
  }
  if (peeks_ != nullptr) peeks_->Deliver(report.peeks);
  if (!batch.empty()) {
    ctx_.cycle().MarkDirty();
    if (!ctx_.writes().WriteAndWait(lock, std::move(batch)).ok()) ack = json::array();
  } else if (!ack.empty() && !ctx_.writes().WaitCommitted(lock)) {
    // Reports of jobs already ended in memory (the agent's other thread sent them first):
    // their rows may still be in flight, and an ack lets the agent forget them, so it waits
    // for them. Otherwise a failover in between restores the job as running, no agent
    // reports it, and it is run again.
    ack = json::array();
  }
  // 2. The long poll: answer with work as soon as there is some.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(report.wait_ms);
  while (true) {
    json launch = json::array();
    json kill = json::array();
    auto again = agents_.find(name);
    if (again == agents_.end()) break;
    CollectWork(name, report.running, launch, kill);
    json run_limits = TakeRunLimitOrders(book_, name);  // job_changes.h
    const bool superseded = again->second->poll_generation != generation;
    if (!launch.empty() || !kill.empty() || !ack.empty() || !run_limits.empty() ||
        HasOrders(name) || superseded || ctx_.stopping() ||
        std::chrono::steady_clock::now() >= deadline) {
      again->second->last_heartbeat_ms = ctx_.NowMs();
      return HostReply(name, std::move(launch), std::move(kill), std::move(ack),
                       std::move(run_limits));
    }
    ctx_.wakeups().WaitUntil(lock, deadline);
  }
  return NotFound("agent " + name + " is gone");
}

json AgentRegistry::HostReply(const std::string& name, json launch, json kill, json ack,
                              json run_limits) {
  json reply = {{"epoch", ctx_.writes().epoch()},
                {"launch", std::move(launch)},
                {"kill", std::move(kill)},
                {"ack", std::move(ack)},
                {"run_limits", std::move(run_limits)}};
  if (settings_.HealthChecksInUse()) {  // a reconfiguration reaches live agents (R-OPS-4)
    reply["health_check"] = wire::EncodeHealthCheck(settings_.HealthCheckFor(name));
  }
  if (peeks_ != nullptr && peeks_->HasOrders(name)) {
    for (const wire::PeekOrder& order : peeks_->TakeOrders(name)) {
      reply["peek"].push_back(wire::EncodePeekOrder(order));
    }
  }
  if (auto signals = signal_orders_.find(name); signals != signal_orders_.end()) {
    for (const wire::SignalOrder& order : signals->second) {
      reply["signal"].push_back(wire::EncodeSignalOrder(order));
    }
    signal_orders_.erase(signals);
  }
  if (steps_ != nullptr) {
    for (const wire::StepOrder& order : steps_->TakeOrders(name)) {
      reply["steps"].push_back(wire::EncodeStepOrder(order));
    }
    for (const wire::StepKill& order : steps_->TakeKills(name)) {
      reply["step_kill"].push_back(wire::EncodeStepKill(order));
    }
  }
  return reply;
}

bool AgentRegistry::HasOrders(const std::string& name) const {
  return (peeks_ != nullptr && peeks_->HasOrders(name)) ||
         (steps_ != nullptr && steps_->HasOrders(name)) || signal_orders_.contains(name);
}

void AgentRegistry::OrderSignal(JobId job, uint64_t run, const std::vector<std::string>& hosts,
                                const std::string& signal) {
  for (const std::string& host : hosts) {
    signal_orders_[host].push_back({.job = job, .run = run, .signal = signal});
    ctx_.wakeups().Mark(host);
  }
}

void AgentRegistry::ApplyExits(const std::string& name, const HeartbeatReport& report, json& ack,
                               store::WriteBatch& batch) {
  for (const wire::ExitReport& e : report.exited) {
    ack.push_back(e.job);
    JobInfo* job = book_.Find(e.job);
    if (job != nullptr && EndsLostRun(*job, name, e)) {
      ctx_.log().warn(
          "job {}: its run on {}, requeued when the host was lost, ended there (exit {}, {}) "
          "before it ran again: the job ends with that run instead of running twice",
          e.job, name, e.ShellStatus(), wire::ToString(e.cause));
      RecordUsage(*job, e);
      book_.Finish(*job, e.ShellStatus(), ExitCauseText(e.cause),
                   e.cause == wire::ExitCause::kKilled, batch);
      continue;
    }
    if (job == nullptr || job->launch().launch_host != name || !job->HoldsAllocation()) continue;
    if (e.run != 0 && job->launch().run != 0 && e.run != job->launch().run) {
      // A late copy of an earlier run's report (e.g. sent on both of the agent's links before
      // the first was acknowledged) after the job was requeued and dispatched here again.
      ctx_.log().info("job {}: ignored the exit report of its earlier run {} (now run {})",
                      FormatJobId(e.job), e.run, job->launch().run);
      continue;
    }
    if (job->requeue_requested && !job->row.cancel_requested) {  // sluice requeue
      job->requeue_requested = false;
      book_.Requeue(
          *job, job->launch().requeue_by.empty() ? "requeued" : "by " + job->launch().requeue_by,
          batch);
      continue;
    }
    if (job->BeingPreempted() && !job->row.cancel_requested) {  // back to its queue
      book_.Requeue(*job, "preempted for job " + std::to_string(job->row.preempted_for), batch);
      continue;
    }
    if (e.cause == wire::ExitCause::kFenced && !job->row.cancel_requested) {
      // The agent lost the controller for its lease and killed its jobs: as a host loss
      // (issue 19; it was an EXIT when the agent came back within the host-loss grace).
      book_.Lose(*job, "its agent fenced itself (no controller response for its lease)", batch);
      continue;
    }
    RecordUsage(*job, e);  // R-SEC-4
    book_.Finish(*job, e.ShellStatus(), ExitCauseText(e.cause), e.cause == wire::ExitCause::kKilled,
                 batch);
  }
}

void AgentRegistry::ApplyLaunchFailures(const std::string& name, const HeartbeatReport& report,
                                        json& ack, store::WriteBatch& batch) {
  for (const wire::LaunchFailure& failure : report.launch_failed) {
    const JobId id = failure.job;
    const std::string& message = failure.message;
    ack.push_back(id);
    JobInfo* job = book_.Find(id);
    if (job == nullptr || job->launch().launch_host != name ||
        job->phase() != core::AdmissionPhase::kAdmitting) {
      continue;
    }
    if (failure.host_fault) {
      // Not the job's doing: it pends again without using up an attempt, and the host that
      // keeps failing is closed before it takes every pending job down with it.
      job->message = "launch failed on " + name + " (a fault of the host): " + message;
      book_.Requeue(*job, "host " + name + " could not launch it: " + message, batch);
      NoteHostFault(name, message, batch);
      continue;
    }
    job->row.dispatch_attempts += 1;
    job->message = "launch failed on " + name + ": " + message;
    if (job->row.dispatch_attempts >= ctx_.options().max_dispatch_attempts) {
      book_.Finish(*job, -1, "DISPATCH_FAILED", false, batch);
    } else {
      book_.Requeue(*job, "DISPATCH_FAILED: " + message, batch);
    }
  }
}

// RUNNING reports confirm ADMITTING jobs; jobs left unlisted at registration and not
// reported since are not run by the agent (R-SRV-2); a cancelled job whose launch went out
// but that the agent never reported never ran.
void AgentRegistry::ApplyRunning(const std::string& name, Agent& agent,
                                 const HeartbeatReport& report, store::WriteBatch& batch) {
  const auto admitting_here = [&](const JobInfo* job) {
    return job != nullptr && job->launch().launch_host == name &&
           job->phase() == core::AdmissionPhase::kAdmitting;
  };
  for (JobId id : report.running) {
    JobInfo* job = book_.Find(id);
    if (admitting_here(job)) {
      book_.ConfirmRunning(*job, "(on " + name + ")", batch);
      agent.host_faults = 0;
    }
  }
  for (JobId id : std::exchange(agent.unlisted, {})) {
    JobInfo* job = book_.Find(id);
    if (job == nullptr || job->launch().launch_host != name || !job->HoldsAllocation() ||
        report.running.contains(id)) {
      continue;
    }
    if (!admitting_here(job)) {
      book_.Lose(*job, "its agent restarted without it", batch);
    } else if (job->from_earlier_epoch || job->launch().launch_sent_ms >= 0) {
      book_.Requeue(*job, "its agent does not run it", batch);
    }
  }
  std::vector<JobInfo*> never_ran;  // Finish unindexes: collected first, without copying the set
  for (JobId id : book_.LaunchedBy(name)) {
    JobInfo* job = book_.Find(id);
    if (job != nullptr && job->row.cancel_requested &&
        job->phase() == core::AdmissionPhase::kAdmitting && !report.running.contains(id) &&
        job->launch().launch_sent_ms >= 0 &&
        ctx_.NowMs() - job->launch().launch_sent_ms > ctx_.options().relaunch_ms) {
      never_ran.push_back(job);
    }
  }
  for (JobInfo* job : never_ran) book_.Finish(*job, 0, "", false, batch);
}

void AgentRegistry::CollectWork(const std::string& name, const std::set<JobId>& running,
                                json& launch, json& kill) {
  const int64_t now = ctx_.NowMs();
  const int32_t grace = ctx_.options().kill_grace_seconds;
  for (JobId id : book_.LaunchedBy(name)) {
    JobInfo* job = book_.Find(id);
    if (job == nullptr) continue;
    if (job->row.cancel_requested || job->requeue_requested) {
      if (KillDue(id, now)) kill.push_back({{"job", id}, {"grace_seconds", grace}});
      continue;
    }
    if (job->BeingPreempted() && job->HoldsAllocation()) {
      // Only once the marker committed: a restart must know why the victim exits.
      if (job->preempt_committed && KillDue(id, now)) {
        const int64_t left = std::max<int64_t>(0, job->row.preempt_kill_at - now / 1000);
        kill.push_back({{"job", id}, {"grace_seconds", left}});
      }
      continue;
    }
    if (job->phase() != core::AdmissionPhase::kAdmitting || !job->launch_ready ||
        running.contains(id) || !ctx_.writes().Writable()) {
      continue;
    }
    if (job->launch().launch_sent_ms >= 0 &&
        now - job->launch().launch_sent_ms < ctx_.options().relaunch_ms)
      continue;
    const json spec = book_.Spec(*job);
    if (!spec.is_object()) continue;  // unreadable now (logged): not sent; the next poll tries
    job->mutable_launch().launch_sent_ms = now;
    launch.push_back(LaunchOf(*job, spec));
    // An interactive job's streams are step 0's (R-LAUNCH-3): its client reads them from now.
    if (steps_ != nullptr && spec.contains("interactive")) steps_->OpenAttached(id, name, now);
  }
  for (JobId id : running) {
    JobInfo* job = book_.Find(id);
    if ((job == nullptr || job->launch().launch_host != name || !job->HoldsAllocation()) &&
        KillDue(id, now)) {
      kill.push_back({{"job", id}, {"grace_seconds", grace}});
    }
  }
}

bool AgentRegistry::KillDue(JobId id, int64_t now_ms) {
  // Forget orders long past (the job ended, or its agent is gone) so the map stays small.
  if (kill_sent_ms_.size() > 4096) {
    std::erase_if(kill_sent_ms_, [&](const auto& e) { return now_ms - e.second > 60'000; });
  }
  auto [it, inserted] = kill_sent_ms_.try_emplace(id, now_ms);
  if (!inserted && now_ms - it->second < ctx_.options().relaunch_ms) return false;
  it->second = now_ms;
  return true;
}

// The job's whole environment: its submitter's (as the `jobs:` policy left it at submission,
// job_environment.h) and the job's own variables (job_variables.h), never the agent's.
json AgentRegistry::EnvironmentOf(const JobInfo& job, const json& spec) const {
  json env = spec.value("env", json::object());
  JobVariablesInput input{.id = job.row.id,
                          .hosts = job.launch().hosts,
                          .queue = job.queue,
                          .name = spec.value("name", ""),
                          .user = job.user,
                          .cwd = spec.value("cwd", "")};
  if (IsArrayElement(job.row.id)) {  // R-UX-3
    input.id = ArrayIdOf(job.row.id);
    input.array_index = ArrayIndexOf(job.row.id);
  }
  if (input.name.empty()) input.name = CommandName(spec.contains("command") ? spec["command"] : json());
  for (auto& [name, value] : JobVariables(input)) env[name] = std::move(value);
  if (credentials_ != nullptr && credentials_->has_key()) {  // R-LAUNCH-1: its own steps
    env["SLUICE_JOB_CREDENTIAL"] = credentials_->Issue(job.row.id, job.row.start_time);
  }
  return env;
}

json AgentRegistry::LaunchOf(const JobInfo& job, const json& spec) const {
  json env = EnvironmentOf(job, spec);
  const json command = spec.contains("command") ? spec["command"] : json();
  const std::string output = ReplaceJobId(spec.value("output", ""), job.row.id);
  std::string error = ReplaceJobId(spec.value("error", ""), job.row.id);
  if (error.empty()) error = output;
  const LaunchLimits limits = LaunchLimitsOf(job, ctx_.state());  // R-SEC-3
  json launch = {{"job", job.row.id},
                 {"run", job.launch().run},
                 {"argv", Argv(command)},
                 {"command", CommandText(command)},
                 {"cwd", spec.value("cwd", "")},
                 {"output", output},
                 {"error", error},
                 {"run_limit", book_.RunLimitOf(job)},  // its reservation's too
                 {"env", env},
                 {"user", job.user.str()},
                 {"account", job.account.str()},
                 {"mem_limit_mb", limits.mem_limit_mb ? json(*limits.mem_limit_mb) : json(nullptr)},
                 {"cpu_limit", limits.cpus ? json(*limits.cpus) : json(nullptr)},
                 {"umask", spec.value("umask", json(nullptr))},
                 {"output_default", spec.value("output_default", false)}};
  wire::EncodeGpuBinding(GpuBindingOf(limits), launch);                              // R-GPU-3
  if (spec.contains("script")) launch["script"] = spec["script"];            // R-UX-1
  if (spec.contains("interactive")) launch["attach"] = spec["interactive"];  // R-LAUNCH-3
  return launch;
}

// --- Leases -------------------------------------------------------------------------------------

void AgentRegistry::CheckLeases() {
  const int64_t now = ctx_.NowMs();
  const ControllerOptions& o = ctx_.options();
  store::WriteBatch batch;
  for (auto& [name, agent] : agents_) {
    const int64_t silent = now - agent->last_heartbeat_ms;
    if (agent->registered && !agent->unavail && silent > o.lease_ms) {
      agent->unavail = true;
      ctx_.log().warn("host {}: no heartbeat for {} ms: unavail", name, silent);
      SyncHostState(name);
    }
    if ((agent->unavail || !agent->registered) && !agent->loss_handled &&
        silent > o.AbsenceMs() + o.host_loss_grace_ms) {
      agent->loss_handled = true;
      HostLoss(name, batch);
    }
  }
  if (!batch.empty()) ctx_.writes().Write(std::move(batch));
}

void AgentRegistry::HostLoss(const std::string& host, store::WriteBatch& batch) {
  signal_orders_.erase(host);
  const std::set<JobId> ids = book_.LaunchedBy(host);
  ctx_.log().warn(
      "host {}: lost (no heartbeat for the agents' absence + grace); {} jobs handled by "
      "on_host_loss",
      host, ids.size());
  for (JobId id : ids) {
    JobInfo* job = book_.Find(id);
    if (job == nullptr) continue;
    if (job->phase() == core::AdmissionPhase::kAdmitting) {
      book_.LoseLaunch(*job, "host " + host + " lost before it reported the job", batch);
      continue;
    }
    book_.Lose(*job, "host " + host + " lost", batch);
  }
}

void AgentRegistry::Expect(const std::string& host, int64_t since_ms) {
  reconciled_epoch_ = 0;  // restored ADMITTING jobs: Reconciling looks again
  if (agents_.contains(host)) return;
  Entry(host).last_heartbeat_ms = since_ms;
}

bool AgentRegistry::Live(const std::string& host) const {
  auto it = agents_.find(host);
  return it != agents_.end() && it->second->registered && !it->second->unavail;
}

AgentView AgentRegistry::View(const std::string& host) const {
  AgentView view;
  auto it = agents_.find(host);
  if (it != agents_.end() && it->second->registered) {
    view = AgentView{.registered = true,
                     .connected = !it->second->unavail,
                     .last_heartbeat_ms = it->second->last_heartbeat_ms,
                     .closed_reason = it->second->closed_reason,
                     .health_failure = HealthFailureOf(host),
                     .load = it->second->load,
                     .restarting = it->second->restarting};
  }
  auto index = ctx_.state().topology().FindHost(host);
  if (index &&
      ctx_.state().topology().hosts()[*index].membership == core::HostMembership::kLeaving) {
    view.closed_reason = std::string(kDrainingReason) +
                         (view.closed_reason.empty() ? "" : "; " + view.closed_reason);
  }
  return view;
}

bool AgentRegistry::Gone(const std::string& host) const {
  auto index = ctx_.state().topology().FindHost(host);
  return index && ctx_.state().topology().hosts()[*index].membership == core::HostMembership::kGone;
}

void AgentRegistry::NoteHostFault(const std::string& name, const std::string& message,
                                  store::WriteBatch& batch) {
  auto it = agents_.find(name);
  if (it == agents_.end()) return;
  Agent& agent = *it->second;
  const int32_t limit = ctx_.options().close_host_after_launch_failures;
  if (++agent.host_faults < limit || limit <= 0 || settings_.HostClosed(name)) return;
  Result<store::WriteBatch> closed = settings_.SetHost(name, "close");
  if (!closed) return;
  for (auto& [key, value] : closed->settings) batch.settings[key] = value;
  agent.closed_reason = std::to_string(agent.host_faults) + " launches in a row failed: " + message;
  ctx_.log().warn("host {}: closed by the controller: {} (open it with `sluice host open {}`)",
                  name, agent.closed_reason, name);
  SyncHostState(name);
}

void AgentRegistry::HostOpened(const std::string& name) {
  auto it = agents_.find(name);
  if (it == agents_.end()) return;
  it->second->host_faults = 0;
  it->second->closed_reason.clear();
}

int64_t AgentRegistry::ConnectedCount() const {
  int64_t connected = 0;
  for (const auto& [name, agent] : agents_) connected += agent->registered && !agent->unavail;
  return connected;
}

void AgentRegistry::SyncHostState(const std::string& host) {
  auto index = ctx_.state().topology().FindHost(host);
  if (!index) return;
  const core::HostState want = settings_.HostStateFor(host, Live(host));
  const core::HostState have = ctx_.state().topology().hosts()[*index].spec.state;
  if (want == have) return;
  (void)ctx_.ApplyLocked(core::HostChanged{host, want}, "");
  ctx_.log().info("host {}: {} -> {}", host, core::ToString(have), core::ToString(want));
  ctx_.cycle().MarkDirty();
}

bool AgentRegistry::Reconciling() const {
  // Earlier-epoch records appear only at a restore (Expect), so once none is left in this
  // epoch the walk over every launched job (each scheduling turn) is skipped.
  if (reconciled_epoch_ == ctx_.writes().epoch()) return false;
  for (const auto& [name, agent] : agents_) {
    for (JobId id : book_.LaunchedBy(name)) {
      const JobInfo* job = book_.Find(id);
      if (job != nullptr && job->from_earlier_epoch &&
          job->phase() == core::AdmissionPhase::kAdmitting) {
        return true;
      }
    }
  }
  reconciled_epoch_ = ctx_.writes().epoch();
  return false;
}

}  // namespace sluice::server
