// `sbatch` and `#SBATCH` (R-COMPAT-1, R-UX-1): Slurm's submission options read with one table
// for the command line and the script's directive lines, and what they ask of Sluice.
//
// Mapped (each also as its short form where Slurm has one):
//   --job-name -J, --output -o, --error -e (%j %A %a as Sluice, %x %u replaced here),
//   --partition -p (queue), --time -t (run limit; UNLIMITED: none), --account -A (project),
//   --chdir -D, --dependency -d, --begin -b, --array -a, --hold -H, --exclusive,
//   --priority, --export, --wrap, --parsable, --wait -W, --quiet -Q, --verbose -v,
//   --reservation (the advance reservation to run in, R-RSV-2);
//   tasks and hosts: --ntasks -n, --cpus-per-task -c, --nodes -N (N or N-N),
//   --ntasks-per-node; memory: --mem (per host), --mem-per-cpu (units K M G T);
//   GPUs: one of --gpus-per-node, --gres=gpu, --gpus-per-task, --gpus -G.
// Accepted without effect (a warning names them): --mail-type, --mail-user, --requeue,
// --no-requeue, --comment, --qos -q, --propagate, --time-min, --kill-on-invalid-dep.
// Refused (kFailedPrecondition: "--constraint is not supported by Sluice"): every other option
// sbatch documents that Sluice cannot honour (--constraint, another gres than gpu, --nodelist,
// --exclude, --licenses, --signal, --input, --mem-per-gpu, --cpus-per-gpu, ...),
// and two different GPU options together. Unknown options and bad values are
// kInvalidArgument in sbatch's words (`Invalid --time specification`).
//
// What Sluice runs (ToSubmitFlags): a Slurm CPU is a Sluice slot, so the job asks for
//   tasks = ntasks x cpus-per-task  (ntasks defaults to max(1, nodes, nodes x per-node))
// and its hosts follow from:
//   --nodes=1 (or one task)                 span[hosts=1]
//   --ntasks-per-node=K                     span[ptile=K x cpus-per-task]
//   --nodes=N > 1                           span[ptile=ceil(tasks / N)]  (at most N hosts)
//   -c C > 1 alone                          span[ptile=C] per task group (each task on one host)
// Memory is Sluice's per-task rusage[mem]: --mem-per-cpu M is mem=M; --mem M (per host) is
// mem=ceil(M / tasks on a host), the tasks on a host being the ptile or, without one, all of
// them. GPUs become the gpu[] section (client/compat/gpu_request.h): per node (--gres=gpu
// and --gpus-per-node) or per task as asked, and --gpus=N over -N K as N/K per host (refused
// when K does not divide N). --export becomes the submission's `env`
// (client/compat/env_export.h).
// Thread-safety: pure functions.
// Implements R-COMPAT-1 for sbatch.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/compat/gpu_request.h"
#include "client/submit_request.h"

namespace sluice::client::compat {

struct SbatchRequest {
  std::optional<std::string> name, output, error, partition, account, chdir, array, wrap;
  std::optional<std::string> reservation;
  std::optional<std::string> export_spec;  // --export as written
  std::optional<std::string> depend;       // translated to Sluice's expression
  std::optional<std::string> begin;        // as ParseBeginTime reads it
  std::optional<int64_t> time_limit;       // seconds; 0: UNLIMITED
  std::optional<int64_t> ntasks, cpus_per_task, ntasks_per_node, nodes, priority;
  std::optional<int64_t> mem_mb, mem_per_cpu_mb;
  std::optional<bool> exclusive, hold;
  std::optional<SlurmGpus> gpus;  // the one GPU option given
  // The command line's own (a directive sets none of them).
  bool parsable = false;
  bool wait = false;
  bool quiet = false;
  std::vector<std::string> ignored;  // options accepted without effect, as written
};

// The command line `args` (after `sbatch`): the request and the operands (the script and its
// arguments; none: the script comes from standard input). `now`: epoch seconds, for --begin.
struct SbatchCommandLine {
  SbatchRequest request;
  std::vector<std::string> operands;
};
Result<SbatchCommandLine> ParseSbatchArgs(std::span<const std::string> args, int64_t now);

// One `#SBATCH` line's words into `request` (later lines win). Errors as ParseSbatchArgs',
// naming the option as written.
Status ApplySbatchDirective(std::span<const std::string> words, int64_t now,
                            SbatchRequest& request);

// The command line's values where it set them, else the directives'.
SbatchRequest MergeSbatch(const SbatchRequest& command_line, const SbatchRequest& directives);

// The Sluice submission flags (no command, no env). `user` replaces %u. Errors:
// kInvalidArgument for contradictory counts (--ntasks-per-node above --ntasks ...).
Result<SubmitFlags> ToSubmitFlags(const SbatchRequest& request, const std::string& user);

}  // namespace sluice::client::compat
