// Fault injection for the watchdog test (R-OPS-2): the environment variable SLUICE_SERVER_FAULT
// makes the scheduling thread hang, as a cycle stuck in a bug would, so that a test can show
// the systemd watchdog stops being kept alive while HTTP goes on.
//   SLUICE_SERVER_FAULT=hang-scheduling-once:FILE   once FILE exists, the scheduling thread's
//                                                   next turn never comes (it waits, without
//                                                   the controller's lock, until Stop)
// Unset (production): never. Unknown values are ignored with one warning. The agent's faults
// are agent/test_faults.h.
// Thread-safety: FaultPlan is read-only after construction; its methods may run on any thread.
#pragma once

#include <string>

namespace sluice::server {

struct FaultPlan {
  std::string hang_scheduling_once;  // the trigger file; empty: never

  // Parses SLUICE_SERVER_FAULT (logs one warning for a value it does not know).
  static FaultPlan FromEnvironment();
  // Whether the scheduling thread hangs now (the trigger file exists).
  bool SchedulingHangs() const;
};

}  // namespace sluice::server
