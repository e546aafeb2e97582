// Submissions (POST /v1/jobs bodies): checking a body field by field and normalizing it into
// the spec JSON the store keeps, and turning that JSON into a core::JobSpec.
//
// Every error is kInvalidArgument naming the field, prefixed by `where` ("jobs[3]"), e.g.
// `jobs[3].tasks: expected a positive integer, got "four"`. Unknown fields are errors.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "base/time.h"
#include "core/model/job.h"
#include "wire/job_json.h"

namespace sluice::server {

// Returns the normalized spec: every field of docs/api.md present (defaults filled in;
// run_limit and begin null when absent), plus nothing else.
Result<nlohmann::json> ParseSubmission(const nlohmann::json& body, const std::string& where);

// The core's view of a stored spec. `user` and `submit_time` are stored beside the spec.
core::JobSpec ToCoreSpec(const nlohmann::json& spec, JobId id);

// kUnavailable "job ID: its spec cannot be read now; retry": the stored spec of job `id`
// could not be read back (JobBook::Spec logged why); the request changed nothing.
Status SpecUnreadable(JobId id);

// The two views of a job's command (wire/job_json.h).
using wire::Argv;
using wire::CommandText;

}  // namespace sluice::server
