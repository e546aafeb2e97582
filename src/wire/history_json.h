// The JSON of job history (R-UX-6; docs/api.md "History"): one ended job's row as
// GET /v1/history returns it, the page's cursor, and the accounting summary
// (GET /v1/history/summary, `sluice history --summary`) with its totals per user and queue.
//
// A row: {"id", "name", "user", "queue", "state", "exit_code" (null: none), "cause" ("" none),
// "submit_time", "start_time" (null: never started), "end_time", "wait_seconds",
// "run_seconds", "slots", "hosts": [{"host", "slots"}], "cpu_seconds" (null: not recorded),
// "max_rss_mb" (null: not recorded), "message" (e.g. MEM_LIMIT's limit and peak; "" none),
// "steps" (its launches' records, wire/step_record.h; [] none; absent from an older server)}.
// Times are Unix seconds.
// wait = (start, or end when it never started) - submit; run = end - start (0 never started).
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/ids.h"
#include "base/status.h"
#include "wire/step_record.h"

namespace sluice::wire {

struct HistoryEntry {
  JobId id = 0;
  std::string name;
  std::string user;
  std::string queue;
  std::string state;
  std::optional<int32_t> exit_code;
  std::string cause;
  int64_t submit_time = 0;
  // When this run's wait began: the submission, or the requeue that ended the run before it
  // (issue 47.6); 0 reads as submit_time.
  int64_t queued_time = 0;
  int32_t run = 1;         // 1 for the first run; an earlier run ended by a requeue is REQUEUED
  int64_t start_time = 0;  // 0: never started
  int64_t end_time = 0;
  int32_t slots = 0;  // allocated (0: never started)
  int32_t gpus = 0;   // GPUs held on all its hosts (R-GPU-4); gpu_seconds = gpus x run time
  std::vector<std::pair<std::string, int32_t>> hosts;
  std::optional<double> cpu_seconds;
  std::optional<int64_t> max_rss_mb;
  std::string message;  // why it ended so (e.g. MEM_LIMIT's limit and peak); "" none
  std::vector<StepRecord> steps;  // R-LAUNCH-2: its `sluice launch` steps, in order
  // An array's own row (R-UX-3): its index spec; "" for a job or an element. Not listed as a
  // job by the history (its elements are the jobs).
  std::string array;

  int64_t WaitSeconds() const;
  int64_t RunSeconds() const;
  int64_t GpuSeconds() const { return int64_t{gpus} * RunSeconds(); }
};

nlohmann::ordered_json HistoryEntryJson(const HistoryEntry& entry);
// Errors: kInvalidArgument naming the member that is missing or of the wrong type.
Result<HistoryEntry> ParseHistoryEntry(const nlohmann::json& row);

// The page cursor: opaque to clients ("<end_time>.<id>" today). Errors: kInvalidArgument.
std::string EncodeHistoryCursor(int64_t end_time, JobId id);
Result<std::pair<int64_t, JobId>> DecodeHistoryCursor(const std::string& cursor);

// Accounting totals per user and per queue.
// The state of a history row that is an earlier run of a job, ended by a requeue.
inline constexpr const char* kRequeuedRun = "REQUEUED";

// Totals of history rows; a job's earlier runs add their slot-hours and wait, not a job.
struct HistoryTotals {
  int64_t jobs = 0;
  double slot_hours = 0;  // slots x run time
  double gpu_hours = 0;   // GPUs x run time (R-GPU-4)
  double cpu_hours = 0;   // of the jobs whose cpu time is recorded
  int64_t cpu_jobs = 0;   // jobs with a recorded cpu time
  int64_t wait_seconds = 0;

  void Add(const HistoryEntry& entry);
  double AverageWaitSeconds() const { return jobs == 0 ? 0 : double(wait_seconds) / jobs; }
};

struct HistorySummary {
  std::map<std::string, HistoryTotals> by_user;
  std::map<std::string, HistoryTotals> by_queue;
  HistoryTotals total;

  void Add(const HistoryEntry& entry);
};

// {"users": [{"user", "jobs", "slot_hours", "gpu_hours", "cpu_hours", "average_wait_seconds"}],
//  "queues": [{"queue", ...}], "total": {...}}; cpu_hours is null when no job recorded it.
nlohmann::ordered_json HistorySummaryJson(const HistorySummary& summary);

}  // namespace sluice::wire
