// `sluice submit` flags -> the POST /v1/jobs body (docs/api.md), with bsub/sbatch habits.
//
//   -n N or N,M     tasks (exact) or min_tasks/max_tasks
//   -W LIMIT        run limit: MINUTES or HOURS:MINUTES (bsub), H:M:S, or 90s/10m/2h/1d
//   -b TIME         begin: epoch seconds, +DURATION (from now), HH:MM (today, or tomorrow if
//                   past), YYYY-MM-DD[THH:MM[:SS]] (local time)
//   command         one argument: a shell command (`/bin/sh -c`); several: an argv
//   --export WHAT   the environment the job gets, as sbatch's --export: ALL (the default: the
//                   submitter's whole environment, as sbatch and bsub), NONE, or a list
//                   [ALL,]VAR[=VALUE],... (the named variables, with ALL added to all of them)
//   -U NAME         the advance reservation to run in (bsub -U, sbatch --reservation)
//   --gpu S         GPUs as bsub -gpu writes them (`num=2:gmodel=A100`, `-` for one): the
//                   gpu[S] section appended to -R (client/compat/gpu_request.h)
// The job runs in the submitter's working directory unless --cwd says otherwise (R-SRV-5b);
// relative output/error paths are made absolute against that directory.
// Parse errors are kInvalidArgument naming the flag. Pure functions (the clock is passed in).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace sluice::client {

struct SubmitFlags {
  std::string queue;
  std::string tasks;  // "N" or "N,M"
  std::string resreq;
  std::string gpu;  // --gpu as written; empty: none
  std::string run_limit;
  std::string depend;
  std::string begin;
  bool exclusive = false;
  bool hold = false;
  std::string output;
  std::string error;
  std::string cwd;
  std::string name;
  std::string project;
  std::optional<int64_t> priority;
  std::string array;  // "1-1000%50" (R-UX-3); empty: no array
  std::vector<std::string> command;
  // A job script's content (R-UX-1), stored with the job; `command` is then the script's
  // name and its arguments.
  std::optional<std::string> script;
  // --export (above); empty is ALL.
  std::string export_env;
  // The submitter's environment and umask, filled by the caller (the CLI reads its own); the
  // server drops what must never travel (SLUICE_TOKEN, MUNGE_*: server/job_environment.h).
  std::map<std::string, std::string> environment;
  std::optional<int> umask;
  // The job's environment as sbatch or bsub made it (client/compat/env_export.h): when set,
  // it is sent instead of what `export_env` takes from `environment`.
  std::optional<std::map<std::string, std::string>> env;
  // -U NAME / --reservation (R-RSV-2): run only inside this advance reservation.
  std::string reservation;
};

// The `env` object of a submission: the variables --export names from `environment`.
// Errors: kInvalidArgument naming --export for a malformed list.
Result<nlohmann::json> ExportedEnvironment(const std::string& export_env,
                                           const std::map<std::string, std::string>& environment);

Result<int64_t> ParseRunLimit(const std::string& text);
// `now` is seconds since the epoch; local times use the process's time zone.
Result<int64_t> ParseBeginTime(const std::string& text, int64_t now);

// `submit_dir` is the submitter's working directory (absolute).
Result<nlohmann::json> BuildSubmitBody(const SubmitFlags& flags, const std::string& submit_dir,
                                       int64_t now);

}  // namespace sluice::client
