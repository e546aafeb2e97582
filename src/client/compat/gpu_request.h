// The GPU options of LSF and Slurm (R-COMPAT-1, R-GPU-1; docs/design/gpu-plan.md §2), turned
// into the `gpu[...]` section of Sluice's resource request (docs/resreq.md):
//
//   bsub -gpu S, #BSUB -gpu S, sluice submit --gpu S    gpu[S]            (`-`: gpu[num=1])
//   sbatch --gpus-per-node=[T:]N, --gres=gpu[:T][:N]     gpu[num=N/host:gmodel=T]
//   sbatch --gpus-per-task=[T:]N                         gpu[num=N/task:gmodel=T]
//   sbatch --gpus=[T:]N (-G), on one node or on K        gpu[num=N/host], gpu[num=(N/K)/host]
//
// LSF's S keeps Sluice's keys (num, mode, j_exclusive, gmodel, gmem, glink, aff) as written,
// drops `mps=no` (Sluice runs no MPS daemon, which is what it asks) and refuses LSF's other
// keys (mps=yes, block, gpack, gvendor, gtile, nvlink). A model that is not a name of the
// request language (`Tesla-V100`: `-` is an operator there) is quoted.
// The section is appended to a plain request only: a compound (`{...}`) or alternative
// (`||`) one is refused, since the GPUs would have to go inside each of its parts.
//
// Errors: kInvalidArgument for a malformed value, kFailedPrecondition for what Sluice does
// not support; messages say what was expected, without the option (callers add it).
// Thread-safety: pure functions.
// Implements R-COMPAT-1 for GPU requests.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::client::compat {

// LSF's -gpu value as a `gpu[...]` section.
Result<std::string> LsfGpuSection(std::string_view value);

// `resreq` with `section` appended. Errors: kFailedPrecondition when `resreq` is compound,
// has alternatives or already has a gpu[] section.
Result<std::string> WithGpuSection(const std::string& resreq, const std::string& section);

// A model as the value of `gmodel=`: as it is when it is a name of the request language,
// else in quotes. Errors: kInvalidArgument when empty or holding both quote characters.
Result<std::string> GmodelValue(std::string_view model);

// Which of sbatch's GPU options asked for them.
enum class SlurmGpuOption { kGpus, kGpusPerNode, kGpusPerTask, kGres };
// The option's long name: "--gpus", "--gpus-per-node", "--gpus-per-task", "--gres".
std::string_view ToString(SlurmGpuOption option);

// What one of those options asks: `count` GPUs of `type` ("" for any) per node, per task or
// in all (kGpus).
struct SlurmGpus {
  SlurmGpuOption option = SlurmGpuOption::kGpusPerNode;
  std::string type;
  int64_t count = 1;
  std::string written;  // the option as given ("--gres=gpu:a100:2"), for messages

  friend bool operator==(const SlurmGpus&, const SlurmGpus&) = default;
};

// `value` of `option`: [TYPE:]N for the --gpus options; a list of NAME[:TYPE][:N] for --gres,
// whose only name may be `gpu`. Errors: kInvalidArgument for a malformed value,
// kFailedPrecondition for another gres or several GPU types.
Result<SlurmGpus> ParseSlurmGpus(SlurmGpuOption option, std::string_view value);

// The section for a job given `nodes` nodes (-N; 0 when not given). Errors:
// kFailedPrecondition for --gpus over several nodes that do not share it evenly.
Result<std::string> SlurmGpuSection(const SlurmGpus& gpus, int64_t nodes);

}  // namespace sluice::client::compat
