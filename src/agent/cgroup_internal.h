// Shared by the two Cgroups implementations (cgroup.cc: v2, cgroup_v1.cc: v1): small file
// helpers for cgroup interface files and the factories. Not part of the agent's interface.
// Thread-safety: stateless functions.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/cgroup.h"
#include "base/status.h"

namespace sluice::agent::cgroup_internal {

std::optional<std::string> ReadText(const std::string& path);
// Writes `text` in one write(2), as cgroup files require; kInternal "write <path>: <errno>".
// Creates the file if missing (only a fake tree lacks interface files).
Status WriteText(const std::string& path, const std::string& text);
// Appends `text` and a newline: a control file that takes one entry per write (devices.deny)
// keeps each, and a plain file (the tests' fake tree) shows every one.
Status AppendText(const std::string& path, const std::string& text);
std::optional<int64_t> ReadInt(const std::string& path);
// The value of the line `key value` in a flat-keyed file (memory.events, cpu.stat, ...).
std::optional<int64_t> ReadKeyed(const std::string& path, const std::string& key);
std::vector<pid_t> ReadPids(const std::string& procs_path);
bool IsDirectory(const std::string& path);
bool IsFile(const std::string& path);
// mkdir -p of `relative` under the existing `base`.
Status MakeDirs(const std::string& base, const std::string& relative);
// rmdir of a cgroup: Ok when gone; kUnavailable while it has processes (EBUSY). A directory
// holding regular files (a fake tree) has them unlinked first; on cgroupfs that never happens.
Status RemoveCgroupDir(const std::string& dir);
// Removes `base/relative` and then its parents up to `base`, best effort (a parent another
// agent still uses stays).
void RemoveDirChain(const std::string& base, const std::string& relative);
// The `job_<id>` entries of `dir`, as job ids.
std::vector<int64_t> ListJobCgroups(const std::string& dir);
// Polls `done` every millisecond for at most `timeout`; returns its last value.
bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);
// Kills (SIGKILL) the stale job cgroups under the agent's directories and removes them, but
// those of `keep` (adopted jobs).
void RemoveStaleJobs(Cgroups& cgroups, const std::vector<std::string>& listing_dirs,
                     const std::set<int64_t>& keep);
int64_t BytesToMb(int64_t bytes);
// Whether the space-separated `list` (cgroup.controllers, cgroup.subtree_control) has `word`.
bool HasWord(const std::string& list, const std::string& word);

// Create the agent's directories (kInternal naming the file on failure) and remove stale
// job cgroups.
Result<std::unique_ptr<Cgroups>> OpenV2(const CgroupOptions& options);
Result<std::unique_ptr<Cgroups>> OpenV1(const CgroupOptions& options);
// v1 hierarchies present under fs_root (of memory, cpu, cpuacct, pids, freezer, devices, and
// cpuset with `cpuset`).
std::vector<std::string> V1Hierarchies(const std::string& fs_root, bool cpuset);

}  // namespace sluice::agent::cgroup_internal
