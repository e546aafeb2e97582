#include "server/step_requests.h"

#include <algorithm>
#include <chrono>

#include "base/array_ids.h"
#include "server/job_identity.h"
#include "server/job_spec.h"
#include "wire/step_stream.h"

namespace sluice::server {
namespace {

using nlohmann::json;

// A job keeps the records of its last steps only: a loop of `srun -n1` must not grow its row
// without bound.
constexpr size_t kMaxStepRecords = 1000;
constexpr int64_t kMaxWaitMs = 10'000;

Status NoJob(JobId id) { return NotFound("no job " + std::to_string(id)); }

struct OpenRequest {
  std::string host;
  std::string command;
  bool pty = false;
  int rows = 0;
  int cols = 0;
  int64_t task = 0;
  std::map<std::string, std::string> env;  // the launcher's variables (srun's SLURM_STEP_*)
};

// Which of a launcher's variables a step takes: its own step and task numbering, never
// anything that would change how it runs (PATH, LD_PRELOAD, the job's credential).
bool StepVariable(const std::string& name) {
  return name.starts_with("SLURM_") || name == "SLUICE_TASK_ID" || name == "SLUICE_NODEID";
}

Result<OpenRequest> ParseOpen(const json& body) {
  if (!body.is_object()) return InvalidArgument("expected a JSON object {host, command, ...}");
  OpenRequest r;
  for (const auto& [key, value] : body.items()) {
    if (key == "host" || key == "command") {
      if (!value.is_string()) return InvalidArgument(key + ": expected a string");
      (key == "host" ? r.host : r.command) = value.get<std::string>();
    } else if (key == "pty") {
      if (!value.is_boolean()) return InvalidArgument("pty: expected true or false");
      r.pty = value.get<bool>();
    } else if (key == "env") {
      if (!value.is_object() || value.size() > 64) {
        return InvalidArgument("env: expected an object of at most 64 variables");
      }
      for (const auto& [name, text] : value.items()) {
        if (!StepVariable(name) || !text.is_string() || text.get<std::string>().size() > 4096) {
          return InvalidArgument("env." + name +
                                 ": a step takes only SLURM_*, SLUICE_TASK_ID and SLUICE_NODEID, "
                                 "as strings of at most 4096 bytes");
        }
        r.env[name] = text.get<std::string>();
      }
    } else if (key == "rows" || key == "cols" || key == "task") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
          value.get<int64_t>() > (key == "task" ? 1 << 24 : 10000)) {
        return InvalidArgument(key + ": expected a small integer >= 0");
      }
      const int64_t v = value.get<int64_t>();
      if (key == "task") r.task = v;
      else (key == "rows" ? r.rows : r.cols) = static_cast<int>(v);
    } else {
      return InvalidArgument("unknown field `" + key +
                             "` (expected host, command, pty, rows, cols, task, env)");
    }
  }
  if (r.host.empty()) return InvalidArgument("host: missing (a host of the job's allocation)");
  if (r.command.empty()) return InvalidArgument("command: missing");
  if (r.command.find('\0') != std::string::npos) {
    return InvalidArgument("command: contains a NUL character");
  }
  return r;
}

std::string HostList(const JobInfo& job) {
  std::string out;
  for (const auto& [name, slots] : job.launch().hosts) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string StateOf(const StepEnd& end) {
  if (end.killed) return "CANCELLED";
  return end.exit.status == 0 && end.exit.error.empty() ? "COMPLETED" : "FAILED";
}

json OptionalJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

Result<Caller> StepRequests::CallerOfCredential(const std::string& credential, JobId id) {
  Result<JobCredentialClaim> claim = credentials_.Verify(credential);
  if (!claim) return claim.error();
  MutexLock lock(ctx_.mu());
  JobInfo* job = book_.Find(claim->job);
  if (claim->job != id || job == nullptr || !job->HoldsAllocation() || job->row.cancel_requested ||
      job->row.start_time != claim->start_time) {
    return Status(StatusCode::kUnauthenticated,
                  "the job credential is not job " + std::to_string(id) +
                      "'s, or its run has ended");
  }
  return Caller{.user = job->user, .account = job->account};
}

Status StepRequests::CheckCaller(const Caller& caller, JobId id) {
  MutexLock lock(ctx_.mu());
  JobInfo* job = book_.Find(id);
  if (job == nullptr) return NoJob(id);
  return RefuseUnlessOwner(caller, job->user, id,
                           "reach only their own jobs' steps");
}

Outcome<json> StepRequests::Open(const Caller& caller, JobId id, const json& body) {
  Result<OpenRequest> request = ParseOpen(body);
  if (!request) return request.error();
  MutexLock lock(ctx_.mu());
  JobInfo* job = book_.Find(id);
  if (job == nullptr) return NoJob(id);
  SLUICE_RETURN_IF_ERROR(RefuseUnlessOwner(caller, job->user, id,
                                           "start steps only in their own jobs"));
  // ADMITTING too: the job's script may ask before its agent's confirmation of the start has
  // reached the controller (a loaded host); its allocation is held either way, and a launch
  // that fails releases it, which ends every step (JobBook::OnReleased).
  const core::AdmissionPhase phase = job->phase();
  if ((phase != core::AdmissionPhase::kAdmitted && phase != core::AdmissionPhase::kAdmitting) ||
      job->row.cancel_requested) {
    return FailedPrecondition("job " + std::to_string(id) + " is " + job->StateText() +
                              "; steps start only inside a running job");
  }
  auto at = std::find_if(job->launch().hosts.begin(), job->launch().hosts.end(),
                         [&](const auto& h) { return h.first == request->host; });
  if (at == job->launch().hosts.end()) {
    return FailedPrecondition("host " + request->host + " is not in job " + std::to_string(id) +
                              "'s allocation (" + HostList(*job) + ")");
  }
  const size_t index = static_cast<size_t>(at - job->launch().hosts.begin());
  // The step's number: after the last one this controller gave, or the job's record has.
  auto [next, fresh] = next_step_.try_emplace(id, 0);
  if (fresh && !job->row.steps.empty()) {
    json recorded = json::parse(job->row.steps.str(), nullptr, false);
    if (recorded.is_array()) {
      for (const json& s : recorded) next->second = std::max(next->second, s.value("step", int64_t{0}));
    }
  }
  const json spec = book_.Spec(*job);
  if (!spec.is_object()) return SpecUnreadable(id);
  const int64_t step = ++next->second;

  wire::StepOrder order{.job = id,
                        .step = step,
                        .command = request->command,
                        .account = job->account,
                        .cwd = spec.value("cwd", ""),
                        .pty = request->pty,
                        .rows = request->rows,
                        .cols = request->cols};
  const json job_env = agents_.JobEnvironment(*job, spec);
  for (const auto& [key, value] : job_env.items()) {
    if (value.is_string()) order.env[key] = value.get<std::string>();
  }
  const std::string node = std::to_string(index);
  const std::string task = std::to_string(request->task);
  for (const auto& [key, value] :
       std::map<std::string, std::string>{{"SLUICE_STEP_ID", std::to_string(step)},
                                          {"SLUICE_TASK_ID", task},
                                          {"SLUICE_NODEID", node},
                                          {"SLURM_STEP_ID", std::to_string(step)},
                                          {"SLURM_STEPID", std::to_string(step)},
                                          {"SLURM_NODEID", node},
                                          {"SLURM_PROCID", task},
                                          {"SLURMD_NODENAME", request->host},
                                          {"LSB_HOSTS_TASK_ID", task}}) {
    order.env[key] = value;
  }
  for (const auto& [key, value] : request->env) order.env[key] = value;
  if (spec.contains("umask") && spec["umask"].is_number_integer()) {
    order.umask = spec["umask"].get<int>();
  }
  const LaunchLimits limits = LaunchLimitsOf(*job, ctx_.state(), index);
  order.mem_limit_mb = limits.mem_limit_mb;
  order.cpu_limit = limits.cpus;
  order.gpus = GpuBindingOf(limits);

  SLUICE_RETURN_IF_ERROR(broker_.Open(order, request->host, ctx_.NowMs()));
  store::WriteBatch batch;
  Record(*job, step, request->host, request->command, std::nullopt, batch);
  ctx_.writes().Write(std::move(batch));
  ctx_.log().info("job {}: step {} on {} by {}: {}", FormatJobId(id), step, request->host, caller.user,
                  request->command.substr(0, 200));
  ctx_.wakeups().Mark(request->host);
  ctx_.wakeups().WakeAll();
  return json{{"job", id},
              {"step", step},
              {"id", wire::StepId(id, step)},
              {"host", request->host}};
}

void StepRequests::Record(JobInfo& job, int64_t step, const std::string& host,
                          const std::string& command, const std::optional<StepEnd>& end,
                          store::WriteBatch& batch) {
  json steps = job.row.steps.empty() ? json::array() : json::parse(job.row.steps.str(), nullptr, false);
  if (!steps.is_array()) steps = json::array();
  auto it = std::find_if(steps.begin(), steps.end(),
                         [&](const json& s) { return s.value("step", int64_t{0}) == step; });
  if (it == steps.end()) {
    if (end) return;  // its start was dropped (kMaxStepRecords)
    while (steps.size() >= kMaxStepRecords) steps.erase(steps.begin());
    steps.push_back({{"step", step},
                     {"host", host},
                     {"command", command.substr(0, 4096)},
                     {"start_time", ctx_.Now()},
                     {"end_time", 0},
                     {"exit_code", nullptr},
                     {"signal", nullptr},
                     {"cpu_seconds", nullptr},
                     {"max_rss_mb", nullptr},
                     {"state", "RUNNING"}});
  } else if (end) {
    json& s = *it;
    s["end_time"] = ctx_.Now();
    s["exit_code"] = end->exit.status;
    s["signal"] = end->exit.signal ? json(*end->exit.signal) : json(nullptr);
    s["cpu_seconds"] = OptionalJson(end->exit.cpu_seconds);
    s["max_rss_mb"] = OptionalJson(end->exit.max_rss_mb);
    s["state"] = StateOf(*end);
  }
  job.row.steps = steps.dump(-1, ' ', false, json::error_handler_t::replace);
  book_.Stage(job, batch);
}

Outcome<json> StepRequests::ReadOutput(const Caller& caller, JobId id, int64_t step,
                                       int64_t after, int64_t wait_ms) {
  SLUICE_RETURN_IF_ERROR(CheckCaller(caller, id));
  Result<wire::StepPage> page =
      broker_.ReadOutput(id, step, after,
                         std::chrono::milliseconds(std::clamp<int64_t>(wait_ms, 0, kMaxWaitMs)),
                         ctx_.NowMs());
  if (!page) return page.error();
  return wire::EncodePage(*page);
}

Outcome<json> StepRequests::WriteInput(const Caller& caller, JobId id, int64_t step,
                                       const json& body) {
  Result<std::vector<wire::StepFrame>> frames = wire::DecodeFrames(body);
  if (!frames) return frames.error();
  for (const wire::StepFrame& frame : *frames) {
    if (frame.kind == wire::FrameKind::kStdout || frame.kind == wire::FrameKind::kStderr ||
        frame.kind == wire::FrameKind::kExit) {
      return InvalidArgument("frames: a client sends only in, eof, sig and winsz frames");
    }
  }
  SLUICE_RETURN_IF_ERROR(CheckCaller(caller, id));
  SLUICE_RETURN_IF_ERROR(broker_.WriteInput(id, step, std::move(*frames)));
  return json{{"accepted", true}};
}

Outcome<json> StepRequests::AgentReadInput(const std::string& host, JobId id, int64_t step,
                                           int64_t after, int64_t wait_ms) {
  Result<wire::StepPage> page = broker_.ReadInput(
      host, id, step, after, std::chrono::milliseconds(std::clamp<int64_t>(wait_ms, 0, kMaxWaitMs)));
  if (!page) return page.error();
  return wire::EncodePage(*page);
}

Outcome<json> StepRequests::AgentWriteOutput(const std::string& host, JobId id, int64_t step,
                                             const json& body) {
  Result<std::vector<wire::StepFrame>> frames = wire::DecodeFrames(body);
  if (!frames) return frames.error();
  std::optional<StepEnd> ended;
  Result<bool> taken = broker_.WriteOutput(host, id, step, std::move(*frames), ended);
  if (!taken) return taken.error();
  if (ended) {
    MutexLock lock(ctx_.mu());
    if (JobInfo* job = book_.Find(id)) {
      store::WriteBatch batch;
      Record(*job, step, host, "", ended, batch);
      ctx_.writes().Write(std::move(batch));
    }
    ctx_.log().info("job {}: step {} on {} ended with status {}{}", FormatJobId(id), step, host,
                    ended->exit.status, ended->exit.error.empty() ? "" : ": " + ended->exit.error);
  }
  return json{{"accepted", *taken}};
}

void StepRequests::JobReleased(JobId id) {
  for (const std::string& host : broker_.KillJob(id)) ctx_.wakeups().Mark(host);
  ctx_.wakeups().WakeAll();
}

void StepRequests::Expire() {
  std::set<std::string> hosts = broker_.Expire(ctx_.NowMs());
  for (const std::string& host : hosts) ctx_.wakeups().Mark(host);
  if (!hosts.empty()) ctx_.wakeups().WakeAll();
}

}  // namespace sluice::server
