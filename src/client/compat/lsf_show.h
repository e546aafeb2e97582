// What LSF 10.1's status commands print for a job (R-COMPAT-1), from a CompatJob: `bjobs`'
// table (`-w`: names and hosts not cut), `bjobs -o 'FIELDS [delimiter=C]'` and
// `bjobs -json -o 'FIELDS'`, `bjobs -l`'s first lines, and `bhist`'s summary.
//
// `-o` fields (case-insensitive, `name:width` accepted and the width ignored): jobid, stat,
// user, queue, job_name, proj_name, from_host, exec_host, nexec_host, slots, command, cwd,
// exit_code, exit_reason, pend_reason, submit_time, start_time, finish_time, cpu_used,
// max_mem, run_time. Other names are kInvalidArgument naming them, as bjobs refuses them.
// Thread-safety: pure functions (times in the process's local time zone).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "client/compat/compat_job.h"

namespace sluice::client::compat {

std::string BjobsHeader();
std::string BjobsLine(const CompatJob& job, bool wide);

struct BjobsFormat {
  std::vector<std::string> fields;  // lower case
  std::string delimiter = " ";
};
Result<BjobsFormat> ParseBjobsFormat(std::string_view text);
// The JSON document of `bjobs -json -o`, in LSF's layout.
std::string BjobsJson(const BjobsFormat& format, const std::vector<CompatJob>& jobs, int64_t now);
// `bjobs -o` without -json: a header of the field names, then one line per job.
std::string BjobsColumns(const BjobsFormat& format, const std::vector<CompatJob>& jobs,
                         int64_t now);
// `bjobs -l`: the job's description lines.
std::string BjobsLong(const CompatJob& job);

std::string BhistHeader();
std::string BhistLine(const CompatJob& job, int64_t now);

// "Dec  4 23:13" (LSF's short time); "-" for 0.
std::string LsfTime(int64_t unix_seconds);

}  // namespace sluice::client::compat
