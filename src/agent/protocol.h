// The agent's side of the controller protocol. The messages and their JSON live in
// wire/agent_protocol.h; this file converts between them and the runner's process view
// (a launch becomes a JobSpec, a JobExit becomes an exit report) and parses the host flags of
// `sluice agent`.
// Implements the agent half of the message shapes of R-SRV-2/R-SRV-3.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "agent/job_runner.h"
#include "base/status.h"
#include "wire/agent_protocol.h"

namespace sluice::agent {

// The report of an ended job. Its `exit_code` is the exit status as a shell shows it:
// 128 + the signal number when the job was killed by a signal.
wire::ExitReport ExitReportOf(const JobExit& exit);

// A step's (or an interactive job's) end as its exit frame carries it (wire/step_stream.h).
wire::StepExit StepExitOf(const JobExit& exit);

// The job to run for a launch; `default_cwd` is used when the launch names no cwd.
JobSpec JobSpecOf(const wire::Launch& launch, const std::string& default_cwd);

// "mem=64000,gpu=2" -> {mem: 64000, gpu: 2}; "type=linux,os=debian" for attributes.
// NOTE: the controller counts resources in whole units: a fraction (mem=1.5) is dropped.
Result<std::map<std::string, int64_t>> ParseResourceList(const std::string& text);
Result<std::map<std::string, std::string>> ParseAttributeList(const std::string& text);

}  // namespace sluice::agent
