// StepRequests: steps of running jobs through the controller (R-LAUNCH-1..3) — who may start
// one where, what it gets, how its streams are reached, and what the job's record keeps.
//
//   POST /v1/jobs/ID/steps {"host": "h2", "command": "orted ...", "pty": false, "rows": 0,
//                           "cols": 0, "task": 0}
//        -> {"job": ID, "step": 3, "id": "ID.3", "host": "h2"}
//   GET  /v1/jobs/ID/steps/N/output?after=K&wait_ms=W   -> a page of output frames
//   POST /v1/jobs/ID/steps/N/input {"frames": [...]}     stdin, EOF, signals, sizes
//   agents: GET /v1/agents/HOST/steps/ID/N/input?after=K&wait_ms=W, POST .../output
// (frames and pages: wire/step_stream.h). A step may be started by the job's owner or an
// administrator — with their own credentials, or with the job's credential
// (job_credential.h), which is worth only this job's step routes — on a host of a RUNNING
// job's allocation; it runs there as the job's account, in the job's cgroup (or one for its
// steps where the job itself does not run) with the job's environment plus
// SLUICE_STEP_ID/SLUICE_TASK_ID/SLUICE_NODEID (and Slurm's names), and it ends with the job:
// when the job gives its allocation back, every host with a live step of it gets a kill order.
// Steps are numbered from 1 per job. Each is in the job's record (`steps`, wire/step_record.h)
// from its start, with its end, exit and accounting once its agent reports them.
// Thread-safety: Open and JobReleased REQUIRE the controller's lock; the stream calls take the
// lock only briefly to check the caller (never while they wait).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/agent_registry.h"
#include "server/context.h"
#include "server/job_book.h"
#include "server/job_credential.h"
#include "server/outcome.h"
#include "server/step_broker.h"

namespace sluice::server {

class StepRequests {
 public:
  StepRequests(ServerContext& ctx, JobBook& book, AgentRegistry& agents, StepBroker& broker,
               const JobCredentials& credentials)
      : ctx_(ctx), book_(book), agents_(agents), broker_(broker), credentials_(credentials) {}

  // The caller a `Job <credential>` authorization names for job `id`: its owner, if the
  // credential is this job's and names its current run. kUnauthenticated otherwise.
  Result<Caller> CallerOfCredential(const std::string& credential, JobId id);

  Outcome<nlohmann::json> Open(const Caller& caller, JobId id, const nlohmann::json& body);
  Outcome<nlohmann::json> ReadOutput(const Caller& caller, JobId id, int64_t step, int64_t after,
                                     int64_t wait_ms);
  Outcome<nlohmann::json> WriteInput(const Caller& caller, JobId id, int64_t step,
                                     const nlohmann::json& body);
  Outcome<nlohmann::json> AgentReadInput(const std::string& host, JobId id, int64_t step,
                                         int64_t after, int64_t wait_ms);
  Outcome<nlohmann::json> AgentWriteOutput(const std::string& host, JobId id, int64_t step,
                                           const nlohmann::json& body);

  // The job gave its allocation back: its steps are killed (JobBook::OnReleased).
  void JobReleased(JobId id);
  // Steps whose client vanished are killed (called from the controller's turn).
  void Expire();

 private:
  // Owner or administrator of a job that exists (lock taken and released here).
  Status CheckCaller(const Caller& caller, JobId id);
  // The step's record in its job's row (REQUIRES the lock); `end` absent: it starts.
  void Record(JobInfo& job, int64_t step, const std::string& host, const std::string& command,
              const std::optional<StepEnd>& end, store::WriteBatch& batch);

  ServerContext& ctx_;
  JobBook& book_;
  AgentRegistry& agents_;
  StepBroker& broker_;
  const JobCredentials& credentials_;
  std::map<JobId, int64_t> next_step_;  // the last step number given, per job
};

}  // namespace sluice::server
