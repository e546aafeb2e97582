// A job template's values -> the POST /v1/jobs body (docs/api.md) of drmaa_run_job, or of
// drmaa_run_bulk_jobs (a Sluice job array). The mapping of each attribute is in docs/drmaa.md.
//
// BuildSubmission, in steps:
//   1. ReadNativeSpecification: the native specification's `sluice submit` flags.
//   2. MergeAttributes: each DRMAA attribute fills its flag (job category -> -q, start time
//      -> -b, wall-clock limit -> -W, js_state hold -> -H, working directory -> --cwd, output
//      and error paths -> -o/-e); an attribute and a flag that both set the same thing are
//      DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES.
//   3. ResolvePaths: the working directory, then the output and error paths with their
//      placeholders expanded (a directory gets a file `NAME.o%j` / `NAME.e%j` in it, as Grid
//      Engine names them), join_files.
//   4. client::BuildSubmitBody: the same body `sluice submit` sends for those flags, with
//      drmaa_v_env as the submitter's environment (`env`: the job's environment is that and
//      the job's own variables; nothing of the loading process leaks in).
//   5. The command as an argv (drmaa_remote_command, then drmaa_v_argv: never through a
//      shell), the job name as given (brackets in it are not an array), and the bulk range
//      as `array`.
//   6. Every value is UTF-8 (the API's JSON carries nothing else).
// Errors: DRMAA errnos naming the attribute or flag and what was expected.
// Pure: the working directory, home, clock and the directory test come in SubmitContext.
// Implements R-COMPAT-4 (drmaa_run_job, drmaa_run_bulk_jobs).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "drmaa/attributes.h"
#include "drmaa/error.h"

namespace sluice::drmaa {

struct SubmitContext {
  std::string submit_dir;  // absolute: the default working directory
  std::string home;        // $drmaa_hd_ph$
  int64_t now = 0;         // epoch seconds
  // Whether a path names an existing directory (drmaa_output_path and drmaa_error_path may).
  std::function<bool(const std::string&)> is_directory;
};

// drmaa_run_bulk_jobs' indexes: start, start + incr, ... up to end.
struct BulkRange {
  int start = 1;
  int end = 1;
  int incr = 1;
};

// Checks a bulk range: 1 <= start <= end, incr >= 1 (DRMAA_ERRNO_INVALID_ARGUMENT otherwise).
Error CheckBulkRange(const BulkRange& range);

// REQUIRES: CheckBulkRange(*bulk).ok() when bulk is set.
Expected<nlohmann::json> BuildSubmission(const TemplateValues& values, const SubmitContext& ctx,
                                         const std::optional<BulkRange>& bulk);

// The DRMAA job ids of the elements of array `id`: "ID[start]", "ID[start+incr]", ...
std::vector<std::string> BulkJobIds(int64_t id, const BulkRange& range);

}  // namespace sluice::drmaa
