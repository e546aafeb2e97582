// Job scripts (R-UX-1) on the wire: a submission's `script` member holds the script's text,
// stored with the job and sent in its launch message, so later edits of the file do not
// change what runs. The job's `command` is then the script's name and its arguments.
// Thread-safety: constants only.
#pragma once

#include <cstddef>

namespace sluice::wire {

// The largest script accepted (POST /v1/jobs refuses a larger one with 413).
inline constexpr size_t kMaxScriptBytes = 1 << 20;

}  // namespace sluice::wire
