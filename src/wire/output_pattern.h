// Output and error file names (R-UX-3), as the server sends them to the agent and `jobs -l`
// shows them: `%j` and `%J` the job id (an element's array id), `%A` the array id, `%a` and
// `%I` the index (0 for a plain job); `%%` and unknown escapes stay as they are.
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

#include "base/ids.h"

namespace sluice::wire {

std::string ExpandOutputPattern(std::string_view pattern, JobId id);

}  // namespace sluice::wire
