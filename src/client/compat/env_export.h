// The environment a job submitted by `sbatch` or `bsub` carries: the submission's `env`
// object (docs/api.md), built from the caller's environment as the originals do (R-COMPAT-1).
//
//   sbatch --export (default ALL, or $SBATCH_EXPORT):
//     ALL                  the caller's whole environment
//     NONE                 only the caller's SLURM_* variables
//     [ALL,]NAME[=VALUE],… the listed variables (NAME alone: its value in the caller's
//                          environment, left out when unset; NAME=VALUE: that value) plus the
//                          caller's SLURM_* variables, and with ALL the whole environment
//   bsub                   the caller's whole environment (LSF copies it by default)
// The value is everything after the first `=`, as written (Slurm does not unquote it); a
// variable name must be a shell name. Errors: kInvalidArgument naming the bad item.
// Thread-safety: pure functions.
// Implements R-COMPAT-1's --export.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::client::compat {

using Environment = std::map<std::string, std::string>;

// "NAME=value" strings (the process's `environ`) as a map; entries without `=` are skipped.
Environment EnvironmentOf(std::span<const std::string> entries);

Result<Environment> ResolveSlurmExport(std::string_view spec, const Environment& caller);

}  // namespace sluice::client::compat
