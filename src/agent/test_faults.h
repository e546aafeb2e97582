// Fault injection for the soak and the exactly-once tests (issue 19): the environment
// variable SLUICE_AGENT_FAULT makes the agent SIGKILL itself at a chosen point, so a test can
// stop it exactly where a crash is most harmful.
//   SLUICE_AGENT_FAULT=crash-after-exit-journaled        after a job's exit is journaled and
//                                                        before it is reported (every time)
//   SLUICE_AGENT_FAULT=crash-after-exit-journaled:0.05   the same, with probability 0.05
// Unset (production): never. Unknown values are ignored with one warning.
// Thread-safety: FaultPlan is read-only after construction; the functions may run on any thread.
#pragma once

#include <string>

namespace sluice::agent {

struct FaultPlan {
  double crash_after_exit_journaled = 0;  // probability in [0, 1]

  // Parses SLUICE_AGENT_FAULT (logs one warning for a value it does not know).
  static FaultPlan FromEnvironment();
};

// True with probability `probability`.
bool FaultFires(double probability);
// SIGKILLs the calling process (logging `where` first).
void CrashNow(const std::string& where);

}  // namespace sluice::agent
