// The sweep a restarted agent runs before it registers (issue 19): processes of jobs its
// crashed run launched are no longer its own (it cannot wait for them, the controller will
// requeue or fail those jobs), so they must not run on unsupervised while the job is run
// again elsewhere. With cgroups the runner's Setup removes the stale job cgroups; this sweep
// covers jobs without cgroups: every process in a process group the journal recorded (and
// started no earlier than that group's leader, so a reused pid is spared), and every process
// whose environment carries the agent's job marker (`SLUICE_AGENT_JOB=<instance>:<job>`,
// which a `setsid` child keeps although it leaves the group).
// Processes of adopted jobs (issue 43) are spared.
// Thread-safety: a pure function of /proc; call it before the agent's threads start.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "agent/journal.h"

namespace sluice::agent {

inline constexpr char kJobMarkerVariable[] = "SLUICE_AGENT_JOB";

// The value of kJobMarkerVariable for `job` of the agent instance `instance`.
std::string JobMarker(const std::string& instance, int64_t job);

// SIGKILLs, until none is left or `timeout` passed, the processes of `launched` and those
// whose environment holds kJobMarkerVariable with a value starting with `instance` + ":"
// (none when `instance` is empty). Never the calling process. Returns how many it killed.
// The jobs of `spared` (adopted, issue 43) keep their marked processes.
int SweepLeftovers(const std::map<int64_t, JournalLaunch>& launched, const std::string& instance,
                   const std::set<int64_t>& spared = {},
                   std::chrono::milliseconds timeout = std::chrono::seconds(3));

}  // namespace sluice::agent

namespace sluice::agent {

// Takes over the running job of `launch` (JobRunner::Adopt); an error leaves it to the sweep.
using AdoptFn = std::function<Status(const JournalLaunch& launch)>;

// A restarted agent's recovery, before it registers (and before the runner removes stale
// cgroups): opens the journal in `state_dir`, adopts the instance id it holds (or records
// `instance` in a new journal; either way `instance` ends up the id to use), then:
//   1. while the previous run's lease holds (job_shepherd.h), hands each job whose shepherd
//      still runs it to `adopt` (issue 43): it stays launched in the journal; the other
//      shepherds are waited for (they kill their jobs once the lease has run out) and every
//      exit record is read;
//   2. sweeps the leftovers of the jobs launched, not adopted and not ended (logging how many
//      processes it killed);
//   3. journals as ended every job whose shepherd recorded that it ended by itself, and as
//      gone the rest not adopted: they are not this agent's any more, and the controller
//      resolves them (requeue or lost) after the exits still unacknowledged, which the
//      journal keeps.
// A null `adopt` adopts nothing (the behaviour before issue 43).
// Errors: AgentJournal::Open's; kInternal when the records' directory cannot be created.
Result<std::unique_ptr<AgentJournal>> RecoverAgentState(const std::string& state_dir,
                                                        const std::string& host,
                                                        std::string& instance,
                                                        const AdoptFn& adopt = nullptr);

}  // namespace sluice::agent
