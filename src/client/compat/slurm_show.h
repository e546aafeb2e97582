// What Slurm 22.05's status commands print for a job (R-COMPAT-1), from a CompatJob:
// `scontrol show job` records, `squeue`'s format specifications and `sacct`'s fields.
//
// squeue's `-o/--format`: text is copied; `%[.][WIDTH]X` is field X, padded to WIDTH (and cut
// to it) on the right, or on the left with `.`, as squeue does. Fields: %i %A (id), %j (name),
// %u (user), %a (account), %P (partition), %t (state code), %T (state), %M (time used), %l
// (time limit), %D (nodes), %C (cpus), %N (node list), %R (node list, or (reason) while
// pending), %r (reason), %Q (priority), %V (submit time), %S (start time), %Z (work dir),
// %o (command), %% (%). Others are kInvalidArgument naming them.
// sacct's fields (case-insensitive): JobID, JobIDRaw, JobName, User, Account, Partition,
// State, ExitCode, AllocCPUS, NNodes, NodeList, Submit, Start, End, Elapsed, ElapsedRaw,
// Timelimit, WorkDir, MaxRSS, TotalCPU, CPUTimeRAW; `Field%N` sets a width.
// Thread-safety: pure functions (times in the process's local time zone).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "client/compat/compat_job.h"

namespace sluice::client::compat {

// One `scontrol show job` record, ending with Slurm's empty line; `details` is -dd.
std::string ScontrolShowJob(const CompatJob& job, bool details, int64_t now);

// A parsed squeue format: literal text and fields.
struct SqueueField {
  std::string literal;  // text before the field
  char letter = 0;      // 0: none (trailing text)
  int width = 0;        // 0: as long as it is
  bool right = false;   // `.`: right-justified
};
Result<std::vector<SqueueField>> ParseSqueueFormat(std::string_view format);
// squeue's default: "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R".
inline constexpr std::string_view kSqueueDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
std::string SqueueHeader(const std::vector<SqueueField>& format);
std::string SqueueLine(const std::vector<SqueueField>& format, const CompatJob& job, int64_t now);

struct SacctField {
  std::string name;  // canonical spelling (the header)
  int width = 0;     // 0: the field's default
};
// "JobIDRaw,State,ExitCode" or with widths ("Account%20"). Errors: kInvalidArgument.
Result<std::vector<SacctField>> ParseSacctFields(std::string_view list);
// `parsable` (-P): fields joined by `|`; else padded columns.
std::string SacctHeader(const std::vector<SacctField>& fields, bool parsable);
std::string SacctLine(const std::vector<SacctField>& fields, const CompatJob& job, bool parsable,
                      int64_t now);

}  // namespace sluice::client::compat
