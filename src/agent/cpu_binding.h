// Which CPUs of its host each job is bound to (issue 41, "CPUs too"; `sluice agent
// --bind-cpus`): every slot a job has on the host gets one whole core (all its hardware
// threads), as LSF's core(1) affinity and Slurm's task/cgroup ConstrainCores give; the job's
// cgroup then allows those CPUs only (cpuset), so a 1-slot job no longer sees the whole host.
//
// Choice, deterministic for the same jobs in the same order:
//   1. cores on the NUMA nodes of the job's GPUs first (`aff`: tasks next to their GPUs);
//   2. then the socket with the most cores already taken (packing keeps whole sockets free for
//      wide jobs, as the GPU allocation keeps whole hosts free);
//   3. then by socket and core number.
// No core is given to two jobs. When the free cores are fewer than the slots (a host with more
// slots than cores), the job shares: it gets its free cores plus the cores least shared, and
// `shared` says so.
//
// Thread-safety: not thread-safe; owned and serialized by the JobRunner.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "agent/cpu_topology.h"

namespace sluice::agent {

struct CpuGrant {
  std::set<int32_t> cpus;  // the kernel's CPU numbers
  std::set<int32_t> mems;  // their NUMA nodes (cpuset.mems)
  bool shared = false;     // some of its cores are other jobs' too
};

class CpuBinder {
 public:
  // `gpu_numa`: the NUMA node of each of the host's GPUs by index (-1 or absent: unknown).
  // `allowed_mems`: the memory nodes a job's cpuset may name (the agent's own; empty:
  // unknown, any).
  explicit CpuBinder(std::vector<LogicalCpu> cpus, std::map<int32_t, int32_t> gpu_numa = {},
                     std::set<int32_t> allowed_mems = {});

  // Binds `job` to `slots` cores (at least one), those on the NUMA nodes of its `gpus`
  // (indexes) first. Its grant's mems are its cores' nodes within allowed_mems, or all of
  // allowed_mems when none is (memory-less nodes). A job bound already gets the same CPUs
  // again (a step group made where the job runs).
  const CpuGrant& Bind(int64_t job, int32_t slots, const std::vector<int32_t>& gpus);
  // The job's cores become free (its cgroup is gone). No-op for a job not bound.
  void Release(int64_t job);

  int32_t core_count() const { return static_cast<int32_t>(cores_.size()); }
  int32_t free_cores() const;

 private:
  struct Core {
    int32_t socket = 0;
    int32_t numa = 0;
    std::set<int32_t> cpus;
    int32_t holders = 0;  // jobs bound to it
  };
  std::map<int32_t, int32_t> gpu_numa_;
  std::set<int32_t> allowed_mems_;
  std::vector<Core> cores_;                       // by socket, then core number
  std::map<int64_t, std::vector<size_t>> bound_;  // job -> indexes into cores_
  std::map<int64_t, CpuGrant> grants_;
};

}  // namespace sluice::agent
