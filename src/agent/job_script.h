// ScriptFiles: the agent's private copies of job scripts (R-UX-1). A launch that carries a
// script (wire::Launch::script) is run from a file this agent writes just before the start:
//   <dir>/job-<ID>, mode 0500, owned by the job's account when the agent runs as root and the
//   account exists here (else by the agent's own identity);
//   <dir> is created mode 0711 and must be a real directory owned by the agent (a symlink or
//   another owner is refused), so no other account can list, replace or read the copies.
// The job runs as `<file> ARGS...` when the script starts with `#!` (the kernel runs its
// interpreter), else as `/bin/sh <file> ARGS...`; ARGS are the launch's argv[1...] (argv[0]
// is the script's name as submitted). The copy is removed when the job ends.
// Thread-safety: not thread-safe; the agent calls it under its mutex (which also keeps a
// concurrent fork from inheriting a file being written: no ETXTBSY).
#pragma once

#include <cstdint>
#include <string>

#include "agent/job_runner.h"
#include "base/status.h"
#include "wire/agent_protocol.h"

namespace sluice::agent {

class ScriptFiles {
 public:
  // `dir`: where the copies go; empty: $TMPDIR (or /tmp)/sluice-scripts-<euid>-<instance>,
  // `instance` the agent's AgentInstanceName (instance_name.h): agents of one host name on one
  // machine must not share it (one's cleanup would unlink the other's job files).
  ScriptFiles(std::string dir, const std::string& instance);

  // Writes `launch.script` and points `spec` at it (argv as above, command cleared).
  // Errors (a failed launch): kFailedPrecondition naming the directory or file and errno.
  Status Prepare(const wire::Launch& launch, JobSpec& spec);
  // Writes the job's hostfile (R-LAUNCH-1): <dir>/job-<ID>.hosts, one host name per slot of
  // its allocation (SLUICE_HOSTS), mode 0444, and sets SLUICE_HOSTFILE and LSB_DJOB_HOSTFILE
  // to it. Errors as Prepare's.
  Status PrepareHostfile(JobSpec& spec);
  // Removes the job's copy and hostfile, if any.
  void Remove(int64_t job);

  // The file of `job`'s copy.
  std::string PathOf(int64_t job) const;

 private:
  Status EnsureDirectory();

  std::string dir_;
};

}  // namespace sluice::agent
