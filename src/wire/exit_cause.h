// How a job's process ended as the agent saw it: the one enum the job runner reports and the
// agent protocol carries (wire/agent_protocol.h), so no mapping sits between them.
// Thread-safety: pure.
#pragma once

#include <string_view>

namespace sluice::wire {

// kRunLimit: killed at its run limit; kKilled: killed on request (cancel, preemption, lost
// lease); kMemLimit: killed at its memory limit (the cgroup's OOM report); kFenced: killed by
// its agent's self-fence (no controller response for the lease; issue 19), which the
// controller handles like the loss of the host (on_host_loss), not as the job's end.
enum class ExitCause { kExit, kRunLimit, kKilled, kMemLimit, kFenced };
// "exit", "run_limit", "killed", "mem_limit", "fenced".
std::string_view ToString(ExitCause cause);

}  // namespace sluice::wire
