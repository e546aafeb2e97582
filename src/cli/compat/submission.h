// What sbatch and bsub share once their options are read (R-COMPAT-1): reading the job
// script (a file or standard input) and the POST of the job. The caller's environment is
// cli/submit_script.h's CallerEnvironment().
// Thread-safety: main-thread only.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "client/compat/env_export.h"
#include "client/rest_client.h"
#include "client/submit_request.h"

namespace sluice::cli::compat {

// The script in `path`, or standard input for "" (`where` in messages: the path or "stdin").
// Errors: kInvalidArgument (unreadable, empty), kResourceExhausted (too large).
Result<std::string> ReadJobScript(const std::string& path);

// POST /v1/jobs of `flags` (`flags.env` the job's environment) with the caller's umask; the
// new job's id and queue.
struct Submitted {
  int64_t id = 0;
  std::string queue;
};
Result<Submitted> SubmitJob(client::RestClient& rest, client::SubmitFlags flags);

}  // namespace sluice::cli::compat
