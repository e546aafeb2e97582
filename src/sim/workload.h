// Workload: the jobs a simulation replays, read from SWF traces or Sluice JSONL files.
//
// A WorkloadJob is a JobSpec plus what only the simulator knows: the job's real runtime
// (truth) and an optional cancel time. Jobs are stably sorted by submit time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/time.h"
#include "core/model/advance_reservation.h"
#include "core/model/job.h"

namespace sluice::sim {

struct WorkloadJob {
  core::JobSpec spec;
  Duration runtime = 0;               // how long the job really runs
  std::optional<Instant> cancel_at;   // JSONL `cancel_at`
  std::optional<Instant> release_at;  // JSONL `release_at`: when a held job is released
  int64_t line = 0;                   // source line, for error messages
  int64_t swf_queue = -1;             // SWF field 15 (queue number), -1 when absent
  std::string array;                  // JSONL `array`: a job array's indices and cap (R-UX-3)
};

struct Workload {
  std::vector<WorkloadJob> jobs;  // stably sorted by submit time
  int64_t skipped = 0;            // data lines or jobs rejected by the loading rules
  int32_t procs = 0;              // SWF: the machine size P used for the rules
  Instant unix_start_time = 0;    // SWF `UnixStartTime` header, else 0
  // JSONL reservation lines (jsonl_reservation.h), set at time 0 of the run.
  std::vector<core::AdvanceReservationSpec> reservations;
};

}  // namespace sluice::sim
