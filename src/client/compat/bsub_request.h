// `bsub` and `#BSUB` (R-COMPAT-1, R-UX-1): LSF's submission options, one table for the command
// line and the script's directive lines, and what they ask of Sluice.
//
// Mapped: -n N|MIN,MAX, -q, -W [H:]M, -J NAME (NAME[1-10]%2: an array), -o/-oo, -e/-eo,
// -R (repeatable: the requests are joined), -M (memory with units, default MB), -x, -w, -b
// ([[[YYYY:]MM:]DD:]hh:mm, or Sluice's forms), -P, -H, -cwd, -sp (priority), -env, -K (wait),
// -I (an interactive job: `sluice run`), -Ip and -Is (the same on a pseudo-terminal), -gpu
// (the gpu[] section appended to a plain -R: client/compat/gpu_request.h), -U (the advance
// reservation to run in, R-RSV-2).
// Accepted without effect (a warning names them): -u, -N, -B (mail), -r, -rn (rerunnable:
// queues say what happens on host loss), -We (estimated run time), -Jd, -ti.
// Refused (kFailedPrecondition "-m: not supported by Sluice"): the other options LSF documents
// (-m, -G, -app, -c, -i, -E, -Ep, -a, -g, -L, resource limits -T -v -p -F -D -S -C, the
// ssh and X11 interactive jobs -IS, -ISp, -ISs, -IX, -sla, -pack, -jsdl, ...). Unknown options are
// kInvalidArgument ("illegal option -- Z").
//
// -M is LSF's per-process memory limit; Sluice's limit is the per-task reservation, so -M M
// becomes rusage[mem=M] when the request reserves no `mem` itself (inserted into its rusage
// section, or appended; a compound request is left as written). `bparams -a` says
// RESOURCE_RESERVE_PER_TASK=Y and LSF_UNIT_FOR_LIMITS=MB, which is how Sluice reads both.
// Thread-safety: pure functions.
// Implements R-COMPAT-1 for bsub.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/compat/env_export.h"
#include "client/submit_request.h"

namespace sluice::client::compat {

enum class BsubInteractive { kNo, kPlain, kPty };

struct BsubRequest {
  std::optional<std::string> tasks, queue, run_limit, name, output, error, project, cwd, depend;
  std::optional<std::string> reservation;  // -U
  std::optional<std::string> begin;  // as ParseBeginTime reads it
  std::vector<std::string> resreq;   // each -R
  std::optional<int64_t> mem_limit_mb, priority;
  std::optional<std::string> gpu;    // -gpu as a gpu[...] section (LsfGpuSection)
  std::optional<bool> exclusive, hold;
  std::optional<std::string> env_spec;  // -env as written
  bool wait = false;                    // -K (the command line's own)
  BsubInteractive interactive = BsubInteractive::kNo;  // -I, -Ip/-Is (the command line's own)
  std::vector<std::string> ignored;     // options accepted without effect, as written
};

struct BsubCommandLine {
  BsubRequest request;
  std::vector<std::string> operands;  // the command and its arguments (none: stdin's script)
};
// `args` after `bsub`; `now` (epoch seconds) checks begin times.
Result<BsubCommandLine> ParseBsubArgs(std::span<const std::string> args, int64_t now);
// One `#BSUB` line's words into `request` (later lines win).
Status ApplyBsubDirective(std::span<const std::string> words, int64_t now, BsubRequest& request);
BsubRequest MergeBsub(const BsubRequest& command_line, const BsubRequest& directives);
// The Sluice submission flags (no command, no env). Errors: kFailedPrecondition for -gpu with
// a compound or alternative -R, or one with a gpu[] section.
Result<SubmitFlags> ToSubmitFlags(const BsubRequest& request);

// `rusage[mem=MB]` added to `resreq` unless it reserves mem already (see the header comment).
std::string WithMemory(const std::string& resreq, int64_t mb);

// bsub -env: "all" (the default: the caller's environment), "none", or a comma-separated list
// of NAME=VALUE / NAME items, optionally after "all". Errors: kInvalidArgument.
Result<Environment> ResolveLsfEnv(const std::optional<std::string>& spec,
                                  const Environment& caller);

}  // namespace sluice::client::compat
