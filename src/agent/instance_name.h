// The name that tells two agents of one host name on one machine apart (two clusters, two test
// runs): `<host>-<8 hex digits>`, the digits an FNV-1a hash of the agent's state directory
// (the journal's, which its agent locks), so a restarted agent gets its earlier name back.
// Names the agent's default cgroup path (cgroup.h) and its job scripts' directory
// (job_script.h); both used to be per host name only, and each agent's cleanup removed the
// other's cgroups (issue 47.2) or job files (a hostfile unlinked under a running mpirun).
// Thread-safety: a pure function of its arguments (it resolves the directory's path).
#pragma once

#include <string>

namespace sluice::agent {

std::string AgentInstanceName(const std::string& host, const std::string& state_dir);

}  // namespace sluice::agent
