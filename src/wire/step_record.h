// The record of a job's steps (R-LAUNCH-2, issue 39): each `sluice launch` inside a job is a
// step `ID.N`, kept with the host it ran on, its command, times, exit and accounting, as
// sacct keeps a Slurm job's steps. The controller stores a job's steps as the text of one JSON
// array (store::StoredJob::steps, "" for none); job objects (`steps`), history rows and
// `sluice jobs -l` / `sluice history` show them.
//
// Representation: one element per step, in the order the steps began, e.g.
//   {"step": 1, "host": "h1", "command": "hostname", "start_time": 1733380000,
//    "end_time": 1733380005, "exit_code": 0, "signal": null, "cpu_seconds": 0.01,
//    "max_rss_mb": 3.2, "state": "COMPLETED"}
// Times are Unix seconds; `end_time` is 0 while the step runs. `exit_code` is the shell
// status (128 + signal when killed), null while running or when none was reported (a lost
// host); `signal` is the signal number that killed it, else null; `cpu_seconds` and
// `max_rss_mb` are null when not measured. `state` is RUNNING, COMPLETED, FAILED or CANCELLED.
// Invariants DecodeSteps checks: every member present with its type, `step` >= 1 and unique,
// times >= 0, `signal` >= 1 when set, a RUNNING step has end_time 0 and exit_code null.
// Members it does not know are ignored, so that an older client reads a newer server's steps.
// Thread-safety: value types and pure functions.
// Implements R-LAUNCH-2 (the record; the controller's step broker fills it).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::wire {

struct StepRecord {
  int32_t step = 0;  // N of `ID.N`, from 1
  std::string host;
  std::string command;
  int64_t start_time = 0;
  int64_t end_time = 0;  // 0: running
  std::optional<int32_t> exit_code;
  std::optional<int32_t> signal;
  std::optional<double> cpu_seconds;
  std::optional<double> max_rss_mb;
  std::string state;  // RUNNING, COMPLETED, FAILED, CANCELLED

  friend bool operator==(const StepRecord&, const StepRecord&) = default;
};

// True for the four states above.
bool IsStepState(std::string_view state);

// The JSON array of `steps` (every member written; a non-finite number as null). Encode then
// Decode gives back equal records.
nlohmann::json EncodeSteps(const std::vector<StepRecord>& steps);

// The records of stored text ("" is no steps). Errors: kInvalidArgument naming the element
// and member, e.g. "steps[1].exit_code: expected an integer or null".
Result<std::vector<StepRecord>> DecodeSteps(std::string_view text);
// The same from an already parsed array (a job object's or history row's `steps`).
Result<std::vector<StepRecord>> DecodeStepsJson(const nlohmann::json& steps);

}  // namespace sluice::wire
