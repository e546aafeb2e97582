// Cgroups: the per-job control groups of one agent (R-SEC-3, R-SEC-4). Each job gets a cgroup
// `<agent path>/job_<id>` with its limits (memory, CPU, pids); killing the job kills every
// process of its cgroup, so a `setsid` or double-forked child cannot escape; at its end the
// cgroup yields the job's CPU time, memory peak and whether the kernel's OOM killer struck.
//
// Representation: two implementations behind one interface.
//   - v2 (unified tree, `<fs_root>/<path>/job_<id>`): memory.max (+ memory.swap.max = 0),
//     cpu.max, pids.max, cpuset.cpus and cpuset.mems of a bound job; cgroup.kill (or freeze, kill,
//     thaw before Linux 5.14); cpu.stat usage_usec, memory.peak, memory.events oom_kill. The
//     agent's own directories get the memory, cpu and pids controllers in their
//     cgroup.subtree_control and hold no process.
//   - v1 (legacy or hybrid: one hierarchy per controller, `<fs_root>/<ctrl>/<path>/job_<id>`
//     for ctrl in memory, cpu, cpuacct, pids, freezer, devices, and cpuset when asked; a
//     missing hierarchy is skipped): memory.limit_in_bytes (+ memsw), cpu.cfs_quota_us, pids.max,
//     cpuset.cpus and cpuset.mems (the agent's own when the job is not bound: a v1 cpuset starts
//     empty); kill = freeze, SIGKILL every pid, thaw; cpuacct.usage, memory.max_usage_in_bytes,
//     memory.oom_control oom_kill.
// A job enters its cgroup by writing `0` into each of `ProcsFiles(job)` from the forked child
// before it drops root and execs (see job_runner.h), so every descendant inherits it.
// Detection (`Detect`): auto looks at the file system type of `fs_root` (cgroup2: v2; a
// cgroup v1 `memory` hierarchy under it: v1; else none); an explicit v2/v1 only checks that
// the layout's files exist, so tests can point `fs_root` at a fake tree in a temp dir.
//
// Invariants: the agent's directories hold only `job_<id>` cgroups it created; `Open` removes
// stale ones (a crashed agent's), killing what still runs in them.
// Thread-safety: not thread-safe; owned and serialized by the JobRunner.
// Implements R-SEC-3 (containment, limits, OOM cause) and the cgroup half of R-SEC-4.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::agent {

enum class CgroupMode { kAuto, kV2, kV1, kNone };
std::string_view ToString(CgroupMode mode);
// "auto", "v2", "v1", "none" (the `sluice agent --cgroup` values); else kInvalidArgument.
Result<CgroupMode> ParseCgroupMode(std::string_view text);

struct CgroupOptions {
  // NOTE: the library default is kNone so that a runner built without options behaves as
  // before; `sluice agent --cgroup` defaults to auto (R-SEC-3) and passes it here.
  CgroupMode mode = CgroupMode::kNone;
  std::string fs_root = "/sys/fs/cgroup";
  // The agent's sub-tree, relative to each hierarchy. Agents sharing a machine must use
  // distinct paths (their stale cleanup would kill each other's jobs); the JobRunner fills an
  // empty path with `sluice/<host name>`.
  std::string path;
  // Use the cpuset controller (JobRunnerOptions::bind_cpus): the v1 `cpuset` hierarchy, the
  // v2 `cpuset` controller delegated down the agent's tree. Off, jobs' cgroups are as before.
  bool cpuset = false;
  // Jobs whose cgroups are not stale at Open: a restarted agent adopted them (issue 43).
  std::set<int64_t> keep;
};

// A device node a job may not open: a character ('c') or block ('b') device by number.
struct DeviceRule {
  char type = 'c';
  uint32_t major = 0;
  uint32_t minor = 0;

  friend bool operator==(const DeviceRule&, const DeviceRule&) = default;
};

struct CgroupLimits {
  std::optional<int64_t> memory_mb;  // memory (and memory + swap) limit
  std::optional<int> cpus;           // CPU bandwidth, in CPUs
  std::optional<int64_t> pids;       // at most this many tasks
  std::vector<DeviceRule> deny;      // devices refused to the job (other jobs' GPUs, R-GPU-3)
  // The CPUs the job may run on and their NUMA nodes (cpu_binding.h); empty: every CPU the
  // agent has. Enforced where BindsCpus().
  std::set<int32_t> cpuset;
  std::set<int32_t> mems;
};

struct CgroupUsage {
  std::optional<double> cpu_seconds;       // user + system of every process that ran in it
  std::optional<double> peak_mb;           // memory high-water mark
  std::optional<int64_t> memory_limit_mb;  // the limit that was set, if any
  int64_t oom_kills = 0;                   // processes the OOM killer ended in this cgroup
};

class Cgroups {
 public:
  virtual ~Cgroups() = default;

  virtual CgroupMode mode() const = 0;
  // Whether CgroupLimits::deny is enforced: by the v1 devices controller when it is mounted,
  // under v2 by an eBPF device program on the job's cgroup (cgroup_device_bpf.h).
  virtual bool FencesDevices() const { return false; }
  // Whether CgroupLimits::cpuset is enforced: by the cpuset controller (v1 hierarchy, or
  // enabled for the agent's directory on v2).
  virtual bool BindsCpus() const { return false; }
  // Directories of the agent's sub-tree, one per hierarchy (for logs and tests).
  virtual std::vector<std::string> AgentDirs() const = 0;

  // Creates the job's cgroup and sets its limits. An existing cgroup of the same job (a
  // requeued job whose previous run is still draining is never restarted by the runner, so
  // this is a leftover) is killed and removed first. kInternal (naming the file) when a
  // directory or a limit cannot be written; the partial cgroup is removed.
  virtual Status Create(int64_t job, const CgroupLimits& limits) = 0;
  // The `cgroup.procs` files the job's first process writes `0` into (one per hierarchy).
  virtual std::vector<std::string> ProcsFiles(int64_t job) const = 0;
  // Sends `signal` to every process of the job's cgroup (frozen meanwhile where possible, so
  // no pid is reused between listing and signalling). SIGKILL uses cgroup.kill on v2.
  virtual void Signal(int64_t job, int signal) = 0;
  // True when no process is left in the job's cgroup (or it does not exist).
  virtual bool Empty(int64_t job) const = 0;
  virtual CgroupUsage Usage(int64_t job) const = 0;
  // Removes the job's cgroup; kUnavailable while processes remain (call again later).
  virtual Status Remove(int64_t job) = 0;
  // Removes the agent's (empty) directories, best effort, at agent exit.
  virtual void RemoveAgentDirs() = 0;
};

// The layout to use for `options.mode` on this machine: kV2, kV1 or kNone (auto without
// cgroups). kFailedPrecondition when an explicit v2/v1 is not there (message naming fs_root).
Result<CgroupMode> DetectCgroupMode(const CgroupOptions& options);

// Detects, creates the agent's directories and removes stale job cgroups from a previous run
// (killing their processes). Returns nullptr for kNone. kFailedPrecondition / kInternal
// when the requested layout is missing or its directories cannot be created (e.g. not root).
// REQUIRES: options.path is not empty.
Result<std::unique_ptr<Cgroups>> OpenCgroups(const CgroupOptions& options);

// "job_<id>", the name of a job's cgroup.
std::string JobCgroupName(int64_t job);

// `sluice agent`'s default cgroup path: `sluice/<AgentInstanceName>` (instance_name.h; issue
// 47.2). Two agents of one name on one machine (two clusters, two test runs) used to
// share `sluice/<host>`, and each one's cleanup at start killed the other's jobs and removed its
// tree; agents of distinct state directories (the journal's directory, locked by its agent) now
// get distinct paths, and a restarted agent (same state directory) finds its own stale cgroups.
std::string DefaultCgroupPath(const std::string& host, const std::string& state_dir);

}  // namespace sluice::agent
