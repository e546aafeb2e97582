// `sluice submit --wait` (R-UX-5; bsub -K, sbatch --wait): the exit code the CLI returns for a
// job that ended, from its job object (docs/api.md):
//   DONE                        0
//   EXIT or CANCELLED with an exit code in 1..255 (the job's own, or 128 + signal when it
//                               was killed: 137 for SIGKILL, 143 for SIGTERM, ...)   that code
//   anything else that ended    1 (no exit code: never started, unschedulable, lost, ...)
// and whether a state is an end state. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sluice::client {

bool IsEndState(const std::string& state);
// REQUIRES: IsEndState(job["state"]).
int WaitExitCode(const nlohmann::json& job);

}  // namespace sluice::client
