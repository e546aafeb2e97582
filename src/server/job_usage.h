// What a job used (R-SEC-4), from its agent's exit report into the job's row: CPU time (user
// + system) rounded to milliseconds, memory peak rounded to 0.1 MB, and the agent's message
// (for MEM_LIMIT the limit and the peak). The row keeps them (the store's cpu_seconds,
// max_rss_mb and message columns); job objects and events show them.
// Thread-safety: RecordUsage REQUIRES the context's mutex held (it writes a JobInfo).
// Implements the controller's part of R-SEC-4 and the MEM_LIMIT cause of R-SEC-3.
#pragma once

#include <string>

#include "server/job_book.h"
#include "wire/agent_protocol.h"

namespace sluice::server {

// Copies the report's measurements and message into `job` (before JobBook::Finish stages it).
void RecordUsage(JobInfo& job, const wire::ExitReport& report);

// The exit cause the job records: RUN_LIMIT, MEM_LIMIT, or "" (its exit status decides:
// DONE, or EXIT NON_ZERO_EXIT; a kill by request is the caller's business).
std::string ExitCauseText(wire::ExitCause cause);

}  // namespace sluice::server
