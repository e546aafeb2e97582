// The variables every job gets from Sluice, in its own dialect and in LSF's and Slurm's, so
// that scripts, MPI and workflow tools written for either work unchanged (R-SRV-5b,
// R-UX-3, R-COMPAT-2; issue 40):
//   SLUICE_JOB_ID, SLUICE_NTASKS, SLUICE_HOSTS (h1:2,h2:2), SLUICE_QUEUE, SLUICE_JOB_NAME,
//   SLUICE_SUBMIT_DIR, SLUICE_ARRAY_ID / SLUICE_ARRAY_INDEX (array elements);
//   SLURM_JOB_ID, SLURM_JOBID, SLURM_JOB_NAME, SLURM_JOB_PARTITION, SLURM_JOB_USER,
//   SLURM_NTASKS, SLURM_NPROCS, SLURM_NNODES, SLURM_JOB_NUM_NODES, SLURM_NODELIST,
//   SLURM_JOB_NODELIST (a compressed host list, n[1-2]), SLURM_TASKS_PER_NODE and
//   SLURM_JOB_CPUS_PER_NODE (2(x2) / 3,1), SLURM_CPUS_PER_TASK, SLURM_SUBMIT_DIR,
//   SLURM_NODEID / SLURM_PROCID / SLURM_LOCALID (0: the batch step runs on the first host),
//   SLURM_ARRAY_JOB_ID / SLURM_ARRAY_TASK_ID (array elements);
//   LSB_JOBID, LSB_JOBINDEX (0 outside an array), LSB_JOBNAME, LSB_QUEUE, LSB_HOSTS (one word
//   per slot), LSB_MCPU_HOSTS ("h1 2 h2 2"), LS_SUBCWD.
// The host file variables (SLUICE_HOSTFILE, LSB_DJOB_HOSTFILE) name a file the agent writes
// on the first host (agent/job_files.h), so they come from the agent.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/ids.h"

namespace sluice::server {

struct JobVariablesInput {
  JobId id = 0;  // the job's own id (an element's is its array's, with `index`)
  std::optional<int64_t> array_index;
  std::vector<std::pair<std::string, int32_t>> hosts;  // the allocation, first host first
  std::string queue;
  std::string name;
  std::string user;
  std::string cwd;  // where it runs: the submission directory unless --cwd said otherwise
};

std::map<std::string, std::string> JobVariables(const JobVariablesInput& job);

// Slurm's compressed host list: runs of names with one prefix and consecutive numbers of one
// width become PREFIX[A-B] (n1,n2,n3,x -> n[1-3],x); the order is kept.
std::string CompressedHostList(const std::vector<std::string>& names);

// Slurm's tasks per node: equal neighbours as N(xK): {2,2,1} -> 2(x2),1.
std::string TasksPerNode(const std::vector<int32_t>& counts);

}  // namespace sluice::server
