// The sweep a restarted agent runs before it registers (issue 19): processes of jobs its
// crashed run launched are no longer its own (it cannot wait for them, the controller will
// requeue or fail those jobs), so they must not run on unsupervised while the job is run
// again elsewhere. With cgroups the runner's Setup removes the stale job cgroups; this sweep
// covers jobs without cgroups: every process in a process group the journal recorded (and
// started no earlier than that group's leader, so a reused pid is spared), and every process
// whose environment carries the agent's job marker (`SLUICE_AGENT_JOB=<instance>:<job>`,
// which a `setsid` child keeps although it leaves the group).
// Thread-safety: a pure function of /proc; call it before the agent's threads start.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "agent/journal.h"

namespace sluice::agent {

inline constexpr char kJobMarkerVariable[] = "SLUICE_AGENT_JOB";

// The value of kJobMarkerVariable for `job` of the agent instance `instance`.
std::string JobMarker(const std::string& instance, int64_t job);

// SIGKILLs, until none is left or `timeout` passed, the processes of `launched` and those
// whose environment holds kJobMarkerVariable with a value starting with `instance` + ":"
// (none when `instance` is empty). Never the calling process. Returns how many it killed.
int SweepLeftovers(const std::map<int64_t, JournalLaunch>& launched, const std::string& instance,
                   std::chrono::milliseconds timeout = std::chrono::seconds(3));

}  // namespace sluice::agent

namespace sluice::agent {

// A restarted agent's recovery, before it registers (and before the runner removes stale
// cgroups): opens the journal in `state_dir`, adopts the instance id it holds (or records
// `instance` in a new journal; either way `instance` ends up the id to use), waits for the
// previous run's job shepherds to end and reads their exit records (job_shepherd.h), sweeps
// the leftovers of jobs launched and not ended (logging how many processes it killed), then
// journals as ended every job whose shepherd recorded that it ended by itself, and as gone
// the rest: they are not this agent's any more, and the controller resolves them (requeue or
// lost) after the exits still unacknowledged, which the journal keeps.
// Errors: AgentJournal::Open's; kInternal when the records' directory cannot be created.
Result<std::unique_ptr<AgentJournal>> RecoverAgentState(const std::string& state_dir,
                                                        const std::string& host,
                                                        std::string& instance);

}  // namespace sluice::agent
