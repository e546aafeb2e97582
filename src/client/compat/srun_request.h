// srun's and salloc's options (R-COMPAT-2, R-LAUNCH-1, R-LAUNCH-3), read the way Open MPI's
// Slurm launcher, Snakemake jobs and people at a terminal write them:
//   -n/--ntasks N, -N/--nodes N, --ntasks-per-node N, -w/--nodelist h1,h2, -K/--kill-on-bad-exit,
//   --pty; GPUs as sbatch asks them (-G/--gpus, --gpus-per-node, --gpus-per-task,
//   --gres=gpu[:T]:N; client/compat/gpu_request.h); accepted and ignored (a step runs in the
//   job's containment and environment): --mpi, --cpu-bind/--cpu_bind, --export,
//   -J/--job-name, --exclusive, --overlap, -c/--cpus-per-task, --mem*, -t/--time,
//   --distribution/-m, -Q/--quiet, -u/--unbuffered, -v/--verbose.
// Options end at the first word that is not one (or after `--`); the rest is the command.
// Errors: kInvalidArgument naming the option and what was expected; kFailedPrecondition for
// GPUs Sluice cannot lay out (see SlurmGpuSection).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "client/compat/gpu_request.h"
#include "client/submit_request.h"

namespace sluice::client::compat {

struct SrunRequest {
  std::optional<int> ntasks, nodes, per_node;
  std::optional<SlurmGpus> gpus;
  std::vector<std::string> nodelist;
  bool kill_on_bad_exit = false;
  bool pty = false;
  std::vector<std::string> command;
};

// `command_required`: srun needs a command; salloc starts a shell.
Result<SrunRequest> ParseSrun(std::span<const std::string> args, bool command_required = true);

// What an interactive job of srun (outside a job) or salloc asks for: what sbatch asks with
// the same -n, -N, --ntasks-per-node and GPU options (sbatch_request.h's ToSubmitFlags).
// Errors: as ToSubmitFlags' (more nodes than tasks, --gpus not shared evenly over -N).
Result<SubmitFlags> AllocationFlags(const SrunRequest& request);

// The non-empty words of `text` between any of `separators`.
std::vector<std::string> SplitWords(std::string_view text, std::string_view separators);

}  // namespace sluice::client::compat
