// Job objects of GET /v1/jobs (docs/api.md "job object") written as JSON text directly, and
// the two views of a job's `command` (a string or an argv array) the API and agents use.
//
// Why: a listing of 100,000 jobs built as an nlohmann tree under the controller's mutex held
// that mutex for seconds — heartbeats waited, and agents fenced themselves (issue 8). Now the
// controller copies each selected job's changing fields into a JobListEntry under the lock
// (a few strings and integers; the reasons are shared, not copied), and the text is written
// after the lock is released. The fields fixed at submission are serialised once per job
// (FixedJobText) and shared by every listing.
// Invariant: the text of an entry parses to the same JSON as Controller::JobJson(job, false)
// (plus `reasons` when asked for), key for key; tests/server/job_text_test.cc checks it.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "base/json_text.h"
#include "core/driver/forecast.h"
#include "core/reasons/reason.h"

namespace sluice::wire {

// The spec fields a job object shows and that never change after submission, as the
// members of a JSON object without its braces: `"command":"...","cwd":...`.
std::shared_ptr<const std::string> FixedJobText(const nlohmann::json& spec);

// What a job object shows that may change, copied under the controller's lock.
struct JobListEntry {
  std::shared_ptr<const std::string> fixed;  // FixedJobText of the job's spec
  JobId id = 0;
  std::string user;
  std::string account;  // the UNIX account it runs as (R-SEC-1)
  std::string queue;
  std::string state;
  int64_t submit_time = 0;
  int64_t start_time = 0;  // 0: null
  int64_t end_time = 0;    // 0: null
  std::optional<int32_t> exit_code;
  std::string cause;   // "": null
  std::string reason;  // main reason code; "": null (not waiting)
  int32_t tasks = 0;
  std::vector<std::pair<std::string, int32_t>> hosts;
  int32_t dispatch_attempts = 0;
  std::optional<double> cpu_seconds;  // R-SEC-4, once its agent reported its end; else null
  std::optional<double> max_rss_mb;
  std::string message;  // "": absent
  // The row's steps (R-LAUNCH-2) as stored: wire/step_record.h's JSON text; "": absent.
  std::string steps;
  // With `reasons` asked for (pending_reasons=1): the `reasons` member (null unless waiting).
  bool with_reasons = false;
  std::optional<core::PendingReasons> reasons;  // the last explained cycle's, if any
  std::string hint;                             // what would let it start (core::Hint); "": absent
  // Waiting jobs (R-UX-8): the controller's last forecast (shared with its job record); null:
  // not estimated yet.
  std::shared_ptr<const core::StartEstimate> estimate;
  // A job array's parent (R-UX-3): its specification ("" for other jobs) and its elements
  // by state. An element's `id` is its array's, followed by its `index` (from `id`).
  std::string array;
  std::vector<std::pair<std::string, int64_t>> elements;
};

// The members a job object may have (docs/api.md), for GET /v1/jobs?fields=...
const std::vector<std::string>& JobFieldNames();
using JobFields = std::set<std::string, std::less<>>;

// Appends the job object of `entry` to `out`: every member, or only those in `fields` (plus
// `reasons` when the entry asks for them).
void AppendJobText(const JobListEntry& entry, std::string& out, const JobFields* fields = nullptr);

// The argv a launch runs: a string command becomes {"/bin/sh", "-c", command}.
nlohmann::json Argv(const nlohmann::json& command);
// The command as one line of text (for `jobs` output and core::JobSpec::command).
std::string CommandText(const nlohmann::json& command);

using sluice::AppendJsonString;  // base/json_text.h

}  // namespace sluice::wire
