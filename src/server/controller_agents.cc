// The controller's agent API (docs/api.md "Agents"): registration with reconciliation
// (R-SRV-2) and the long-poll heartbeat that carries launches, kills and acknowledgements.
#include <algorithm>
#include <chrono>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/cycle/events.h"
#include "server/controller.h"
#include "server/controller_internal.h"
#include "server/job_spec.h"

namespace sluice::server {

using nlohmann::json;

namespace {

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

Result<std::set<JobId>> JobIdList(const json& body, const char* field) {
  std::set<JobId> ids;
  if (!body.contains(field)) return ids;
  const json& list = body[field];
  if (!list.is_array()) return InvalidArgument(std::string(field) + ": expected a list of job ids");
  for (const json& v : list) {
    if (!v.is_number_integer()) {
      return InvalidArgument(std::string(field) + ": expected job ids, got " + v.dump());
    }
    ids.insert(v.get<JobId>());
  }
  return ids;
}

std::string ReplaceJobId(std::string text, JobId id) {
  const std::string value = std::to_string(id);
  for (size_t pos = text.find("%j"); pos != std::string::npos; pos = text.find("%j", pos)) {
    text.replace(pos, 2, value);
    pos += value.size();
  }
  return text;
}

}  // namespace

json Controller::LaunchOf(const JobInfo& job) const {
  std::string hosts;
  int32_t tasks = 0;
  for (const auto& [name, slots] : job.hosts) {
    hosts += (hosts.empty() ? "" : ",") + name + ":" + std::to_string(slots);
    tasks += slots;
  }
  json env = job.spec.value("env", json::object());
  env["SLUICE_JOB_ID"] = std::to_string(job.row.id);
  env["SLUICE_NTASKS"] = std::to_string(tasks);
  env["SLUICE_HOSTS"] = hosts;
  const std::string output = ReplaceJobId(job.spec.value("output", ""), job.row.id);
  std::string error = ReplaceJobId(job.spec.value("error", ""), job.row.id);
  if (error.empty()) error = output;
  return {{"job", job.row.id},
          {"argv", Argv(job.spec["command"])},
          {"command", CommandText(job.spec["command"])},
          {"cwd", job.spec.value("cwd", "")},
          {"output", output},
          {"error", error},
          {"run_limit", job.spec.value("run_limit", json(nullptr))},
          {"env", env},
          {"user", job.spec.value("user", "")}};
}

// Steps: 1. check the body; 2. add an unknown host (persisted) or keep the configured spec;
// 3. reconcile the jobs this agent launches with what it says it runs (R-SRV-2); 4. the
// host accepts work again.
Reply Controller::Register(const json& body) {
  if (!body.is_object()) return Reply::Error(400, "body: expected an object");
  static const std::set<std::string> kFields = {"name",  "slots",   "resources", "attributes",
                                                "tags",  "running", "epoch"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (!kFields.contains(it.key())) return Reply::Error(400, it.key() + ": unknown field");
  }
  const std::string name = body.value("name", "");
  if (!ValidName(name))
    return Reply::Error(400, "name: expected a host name (letters, digits, -._)");
  core::HostSpec spec{.name = name};
  try {
    spec.slots = body.value("slots", 1);
    spec.resources = body.value("resources", std::map<std::string, int64_t>{});
    spec.attributes = body.value("attributes", std::map<std::string, std::string>{});
    spec.tags = body.value("tags", std::vector<std::string>{});
  } catch (const json::exception& e) {
    return Reply::Error(400, std::string("register body: ") + e.what());
  }
  if (spec.slots < 0) return Reply::Error(400, "slots: expected an integer >= 0");
  Result<std::set<JobId>> running = JobIdList(body, "running");
  if (!running) return Reply::Error(400, running.error().message());
  const json epoch = body.value("epoch", json(0));
  if (!epoch.is_number_integer()) return Reply::Error(400, "epoch: expected an integer");

  std::unique_lock lock(mu_);
  if (epoch.get<uint64_t>() > epoch_) return Reply::Error(409, "stale epoch");
  store::WriteBatch batch;
  auto index = state_.FindHost(name);
  if (!index) {
    core::HostSpec added = spec;
    added.state = core::HostState::kUnavail;
    Status s = core::Apply(core::HostAdded{added}, Now(), state_);
    if (!s.ok()) return Reply::Error(400, s.message());
    dynamic_hosts_.insert(name);
    json stored = {{"slots", spec.slots},
                   {"resources", spec.resources},
                   {"attributes", spec.attributes},
                   {"tags", spec.tags}};
    batch.hosts.push_back(store::StoredHost{name, stored.dump()});
    log_->info("host {}: added by its agent ({} slots)", name, spec.slots);
  } else {
    const core::HostSpec& have = state_.hosts()[*index].spec;
    if (have.slots != spec.slots || have.resources != spec.resources) {
      log_->warn("host {}: agent flags differ from the configuration; the configuration wins",
                 name);
    }
  }
  auto& agent = agents_[name];
  if (!agent) {
    agent = std::make_unique<AgentInfo>();
    agent->name = name;
  }
  const bool was_registered = agent->registered;
  agent->registered = true;
  agent->unavail = false;
  agent->loss_handled = false;
  agent->last_heartbeat_ms = NowMs();
  ++agent->poll_generation;
  agent->unlisted.clear();
  const std::set<JobId> expected = agent->jobs;
  for (JobId id : expected) {
    JobInfo* job = FindJobLocked(id);
    if (job == nullptr) continue;
    if (!running->contains(id)) {
      agent->unlisted.insert(id);
    } else if (job->row.phase == kPhaseAdmitting) {
      ConfirmRunningLocked(*job, "(reported at registration)", batch);
    }
  }
  log_->info("host {}: agent {} (epoch {}, {} running)", name,
             was_registered ? "re-registered" : "registered", epoch_, running->size());
  SyncHostStateLocked(name);
  MarkDirty();
  work_cv_.notify_all();
  if (!batch.empty()) (void)WriteAndWait(lock, std::move(batch));
  return Reply{200,
               {{"epoch", epoch_},
                {"lease_seconds", options_.lease_ms / 1000},
                {"heartbeat_ms", options_.heartbeat_ms}}};
}

// Steps: 1. check the body; 2. exits and launch failures end or re-pend jobs, RUNNING
// reports confirm ADMITTING ones — all committed before the reply acknowledges them;
// 3. answer with launches and kills, waiting up to wait_ms for some.
Reply Controller::Heartbeat(const std::string& name, const json& body) {
  if (!body.is_object()) return Reply::Error(400, "body: expected an object");
  static const std::set<std::string> kFields = {"epoch", "wait_ms", "running", "exited",
                                                "launch_failed"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (!kFields.contains(it.key())) return Reply::Error(400, it.key() + ": unknown field");
  }
  Result<std::set<JobId>> running = JobIdList(body, "running");
  if (!running) return Reply::Error(400, running.error().message());
  const json epoch = body.value("epoch", json(0));
  if (!epoch.is_number_integer()) return Reply::Error(400, "epoch: expected an integer");
  const json wait = body.value("wait_ms", json(0));
  if (!wait.is_number_integer()) return Reply::Error(400, "wait_ms: expected an integer");
  const int64_t wait_ms = std::clamp<int64_t>(wait.get<int64_t>(), 0, 10'000);
  struct Exit {
    JobId job;
    int32_t code;
    std::string cause;
  };
  std::vector<Exit> exits;
  std::vector<std::pair<JobId, std::string>> failures;
  try {
    for (const json& e : body.value("exited", json::array())) {
      const JobId job = e.at("job").get<JobId>();
      int32_t code = e.value("exit_code", json(0)).is_number() ? e["exit_code"].get<int32_t>() : 0;
      if (e.contains("signal") && e["signal"].is_number_integer()) code = 128 + e["signal"].get<int32_t>();
      const std::string cause = e.value("cause", "exit");
      exits.push_back({job, code, cause == "run_limit" ? "RUN_LIMIT" : (cause == "killed" ? "KILLED" : "")});
    }
    for (const json& f : body.value("launch_failed", json::array())) {
      failures.emplace_back(f.at("job").get<JobId>(), f.value("message", ""));
    }
  } catch (const json::exception& e) {
    return Reply::Error(400, std::string("exited/launch_failed: ") + e.what());
  }

  std::unique_lock lock(mu_);
  auto found = agents_.find(name);
  if (found == agents_.end() || !found->second->registered) {
    return Reply::Error(404,
                        "agent " + name + " is not registered in epoch " + std::to_string(epoch_));
  }
  AgentInfo& agent = *found->second;
  if (epoch.get<uint64_t>() > epoch_) return Reply::Error(409, "stale epoch");
  agent.last_heartbeat_ms = NowMs();
  if (agent.unavail) {
    agent.unavail = false;
    log_->info("host {}: agent back", name);
    SyncHostStateLocked(name);
  }
  const int64_t generation = ++agent.poll_generation;
  work_cv_.notify_all();  // an older poll of this agent answers now

  store::WriteBatch batch;
  json ack = json::array();
  for (const Exit& e : exits) {
    ack.push_back(e.job);
    JobInfo* job = FindJobLocked(e.job);
    if (job == nullptr || job->launch_host != name || !job->HoldsAllocation()) continue;
    if (job->BeingPreempted() && !job->row.cancel_requested) {  // back to its queue
      RequeueLocked(*job, "preempted for job " + std::to_string(job->row.preempted_for), batch);
      continue;
    }
    FinishLocked(*job, e.code, e.cause == "RUN_LIMIT" ? "RUN_LIMIT" : "", e.cause == "KILLED",
                 batch);
  }
  for (const auto& [id, message] : failures) {
    ack.push_back(id);
    JobInfo* job = FindJobLocked(id);
    if (job == nullptr || job->launch_host != name || job->row.phase != kPhaseAdmitting) continue;
    job->row.dispatch_attempts += 1;
    job->message = "launch failed on " + name + ": " + message;
    if (job->row.dispatch_attempts >= options_.max_dispatch_attempts) {
      FinishLocked(*job, -1, "DISPATCH_FAILED", false, batch);
    } else {
      RequeueLocked(*job, "DISPATCH_FAILED: " + message, batch);
    }
  }
  for (JobId id : *running) {
    JobInfo* job = FindJobLocked(id);
    if (job == nullptr || job->launch_host != name || job->row.phase != kPhaseAdmitting) continue;
    ConfirmRunningLocked(*job, "(on " + name + ")", batch);
  }
  // Jobs it did not list at registration and has not reported ended since: it does not
  // run them (R-SRV-2).
  for (JobId id : std::exchange(agent.unlisted, {})) {
    JobInfo* job = FindJobLocked(id);
    if (job == nullptr || job->launch_host != name || !job->HoldsAllocation() ||
        running->contains(id)) {
      continue;
    }
    if (job->row.phase == kPhaseAdmitting) {
      if (job->from_earlier_epoch || job->launch_sent_ms >= 0) {
        RequeueLocked(*job, "its agent does not run it", batch);
      }
      continue;
    }
    LoseJobLocked(*job, "its agent restarted without it", batch);
  }
  // A cancelled job whose launch went out but that the agent never reported: never ran.
  for (JobId id : std::set<JobId>(agent.jobs)) {
    JobInfo* job = FindJobLocked(id);
    if (job != nullptr && job->row.cancel_requested && job->row.phase == kPhaseAdmitting &&
        !running->contains(id) && job->launch_sent_ms >= 0 &&
        NowMs() - job->launch_sent_ms > options_.relaunch_ms) {
      FinishLocked(*job, 0, "", false, batch);
    }
  }
  if (!batch.empty()) {
    MarkDirty();
    (void)WriteAndWait(lock, std::move(batch));  // acknowledged only once committed
  }

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (true) {
    json launch = json::array();
    json kill = json::array();
    const int64_t now = NowMs();
    auto again = agents_.find(name);
    if (again == agents_.end()) break;
    for (JobId id : again->second->jobs) {
      JobInfo* job = FindJobLocked(id);
      if (job == nullptr) continue;
      if (job->row.cancel_requested) {
        kill.push_back({{"job", id}, {"grace_seconds", options_.kill_grace_seconds}});
        continue;
      }
      if (job->BeingPreempted() && job->HoldsAllocation()) {
        // Only once the marker committed: a restart must know why the victim exits.
        if (job->preempt_committed) {
          const int64_t grace = std::max<int64_t>(0, job->row.preempt_kill_at - now / 1000);
          kill.push_back({{"job", id}, {"grace_seconds", grace}});
        }
        continue;
      }
      if (job->row.phase != kPhaseAdmitting || !job->launch_ready || running->contains(id)) continue;
      if (job->launch_sent_ms >= 0 && now - job->launch_sent_ms < options_.relaunch_ms) continue;
      job->launch_sent_ms = now;
      launch.push_back(LaunchOf(*job));
    }
    for (JobId id : *running) {
      JobInfo* job = FindJobLocked(id);
      if (job == nullptr || job->launch_host != name || !job->HoldsAllocation()) {
        kill.push_back({{"job", id}, {"grace_seconds", options_.kill_grace_seconds}});
      }
    }
    const bool superseded = again->second->poll_generation != generation;
    if (!launch.empty() || !kill.empty() || !ack.empty() || superseded || stopping_ ||
        std::chrono::steady_clock::now() >= deadline) {
      again->second->last_heartbeat_ms = NowMs();
      return Reply{200, {{"epoch", epoch_}, {"launch", launch}, {"kill", kill}, {"ack", ack}}};
    }
    work_cv_.wait_until(lock, deadline);
  }
  return Reply::Error(404, "agent " + name + " is gone");
}

}  // namespace sluice::server
