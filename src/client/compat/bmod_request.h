// `bmod` (R-COMPAT-1, R-UX-7): LSF's options for changing a pending job, read into the flags of
// `sluice modify` (client/modify_request.h). `bmod [OPTIONS] JOB_ID`, every option one word
// and its value the next (LSF's habit):
//   -q QUEUE, -n N|MIN,MAX, -J NAME, -W [H:]M, -R REQ, -b BEGIN, -w DEP, -sp PRIORITY;
//   -Wn, -Rn, -bn, -wn, -spn remove the value (LSF's "n" forms; -spn: priority 0).
// Refused (kFailedPrecondition "-o: not supported by Sluice's bmod"): the other options LSF's
// bmod documents (-o, -e, -M, -m, -P, -G, -app, -x, -c, -Jn: a job keeps a name, ...). Unknown options are
// kInvalidArgument with getopt's words.
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>

#include "base/status.h"
#include "client/modify_request.h"

namespace sluice::client::compat {

struct BmodCommandLine {
  ModifyFlags flags;
  std::string job;  // as written: "12" or "12[3]"
};

// `args` after `bmod`. Errors: a bad or missing job id and no change asked are
// kInvalidArgument; refused options kFailedPrecondition.
Result<BmodCommandLine> ParseBmodArgs(std::span<const std::string> args);

}  // namespace sluice::client::compat
