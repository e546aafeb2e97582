// How a job's process ended as the agent saw it: the one enum the job runner reports and the
// agent protocol carries (wire/agent_protocol.h), so no mapping sits between them.
// Thread-safety: pure.
#pragma once

#include <string_view>

namespace sluice::wire {

// kRunLimit: killed at its run limit; kKilled: killed on request (cancel, preemption, lost
// lease); kMemLimit: killed at its memory limit (the cgroup's OOM report).
enum class ExitCause { kExit, kRunLimit, kKilled, kMemLimit };
// "exit", "run_limit", "killed", "mem_limit".
std::string_view ToString(ExitCause cause);

}  // namespace sluice::wire
