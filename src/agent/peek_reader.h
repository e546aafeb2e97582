// The agent's side of `sluice peek` (R-UX-5; wire/peek.h): reads the tail of the output file
// of a job this agent runs, for the controller only (it arrives as a heartbeat reply's order).
// Which file: the launch's output path with `%j` replaced, remembered at the start (a
// PeekTarget) and forgotten when the job ends; a job that runs elsewhere, has ended or writes
// its output to /dev/null gets an error instead. The file is opened without following a final
// symlink and read only if it is a regular file owned by the job's account or by the agent's
// own identity (the identities a job's output file is created under), so a job cannot make
// the agent read another account's file by replacing its output with a link.
// Thread-safety: pure except for the file read and the account lookup; no shared state.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "agent/job_runner.h"
#include "wire/agent_protocol.h"
#include "wire/peek.h"

namespace sluice::agent {

struct PeekTarget {
  std::string path;              // empty: the output is not kept (/dev/null)
  std::optional<uid_t> account;  // the job's account, when it exists on this host
};

// What a started job's peeks read.
PeekTarget PeekTargetOf(const wire::Launch& launch, const JobSpec& spec);

// The answer to `order`; `target` is null for a job this agent does not run.
wire::PeekResult ReadPeek(const wire::PeekOrder& order, const PeekTarget* target);

}  // namespace sluice::agent
