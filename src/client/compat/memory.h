// Memory sizes with units as Slurm and LSF read them (R-COMPAT-1), in whole megabytes.
//
//   kSlurm (`--mem`, `--mem-per-cpu`): an integer with an optional unit K, M, G or T (either
//     case; default M), as sbatch reads it: `--mem 4G` is 4096, `--mem 100K` 1.
//   kLsf (`-M`): a number with an optional unit KB, MB, GB or TB (also K, M, G, T; default MB,
//     the LSF_UNIT_FOR_LIMITS that `bparams -a` reports): `-M 105MB` is 105, `-M 1.5GB` 1536.
// Sizes are rounded up to a whole megabyte. Errors: kInvalidArgument naming what was expected.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace sluice::client::compat {

enum class MemoryDialect { kSlurm, kLsf };

Result<int64_t> ParseMemoryMb(std::string_view text, MemoryDialect dialect);

}  // namespace sluice::client::compat
