// JSONL reader: loads a Sluice workload file (JSON lines, one job per line) into a Workload.
//
// Implements the workload half of R-SIM-4 (`--workload FILE.jsonl`).
//
// Each non-blank line is one JSON object with these keys (times in whole seconds):
//   id         required, integer >= 1, unique in the file
//   submit     required, integer >= 0
//   runtime    required, integer >= 0 (how long the job really runs)
//   user, project, queue, resreq, name, command: strings (resreq is stored as is)
//   tasks      integer >= 1; or min_tasks / max_tasks (never together with tasks). Defaults:
//              min_tasks 1, max_tasks = min_tasks; min_tasks <= max_tasks is required.
//   run_limit  absent or null: none; else integer >= 0
//   priority   integer (int32)
//   begin      integer >= 0: the job may not start before it (BEGIN_TIME)
//   depend     string: a dependency expression (core/model/dependency.h), e.g.
//              "done(3) && !exit(4)"; checked here (syntax, with the column), and every id it
//              names must be a job of the same file
//   exclusive, hold: booleans
//   release_at null or integer >= 0, only with hold: true: when the simulator releases the
//              held job (a time at or before its submission releases it right after it);
//              without it a held job stays held
//   cancel_at  null or integer >= 0
//   gpus       integer N in [1, 64]: ` gpu[num=N]` is added to resreq (or is the whole
//              request when there is none); or a string of LSF -gpu text, added as
//              ` gpu[TEXT]` (`-` is `gpu[]`, the defaults). The text is parsed here, and the
//              sum too when resreq parses alone: a resreq with gpu[] already, a compound or
//              alternatives are errors naming `gpus` (their parts must each say gpu[])
//   reservation string: the advance reservation the job runs in (`-U NAME`)
// A line {"reservation": {...}} defines an advance reservation instead of a job
// (jsonl_reservation.h); they go to Workload::reservations in file order.
// Anything else (unknown key, wrong type, missing required key, duplicate id, a value out of
// range, invalid JSON) is an error; the whole file is rejected.
//
// Errors are kInvalidArgument with the message `<filename>:<line>: <field>: <what was
// expected>` (lowercase, no final period); for invalid JSON or a line that is not an object
// the field is `json`. Keys of one object are checked in alphabetical order, so the error
// reported for a line with several problems is deterministic.
// Jobs are stably sorted by submit time; `max_jobs` (if >= 0) then keeps the first N.
// `Workload::procs` and `skipped` stay 0. Thread-safety: free functions, no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "sim/workload.h"

namespace sluice::sim {

struct JsonlOptions {
  int64_t max_jobs = -1;  // --max-jobs; -1: all
};

// Parses JSONL text; `filename` is used only in error messages.
Result<Workload> ParseJsonl(std::string_view text, std::string_view filename,
                            const JsonlOptions& options);

// Reads `path` (plain, or gzip detected by its magic bytes) and parses it.
// Errors: kNotFound if the file cannot be read; else as ParseJsonl, with `path` as filename.
Result<Workload> ReadJsonl(const std::string& path, const JsonlOptions& options);

}  // namespace sluice::sim
