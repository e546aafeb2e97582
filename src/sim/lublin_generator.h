// Lublin generator: a synthetic workload of rigid parallel batch jobs for `sluice gen`.
//
// Implements R-SIM-5 (seeded, deterministic, with job count, machine size and load).
//
// Model: U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
// characteristics of rigid jobs", J. Parallel and Distributed Computing 63(11), 2003. The
// parameter values are the paper's fits for *batch* jobs, as published with the authors'
// generator (lublin99); they are listed with their meaning in lublin_generator.cc.
//   Size:     serial with probability 0.2927; else log2(size) is two-stage uniform
//             (U[ULow, UMed] with probability 0.875, else U[UMed, UHi]) and is rounded to an
//             integer (a power-of-two size) with probability 0.6686; size = round(2^x).
//   Runtime:  ln(runtime) is hyper-gamma: Gamma(6.57, 0.823) with probability p, else
//             Gamma(639.1, 0.0156), where p = -0.003 * size + 0.6986 (clamped to [0, 1]);
//             draws with ln(runtime) > 12 are redrawn (runtime <= e^12 s, about 45 h).
//   Arrivals: ln(inter-arrival seconds) is Gamma(6.0415 * 1.0519, 0.8531) (redrawn above 13),
//             measured in "busy-hour" time; a daily cycle of 48 half-hour buckets, weighted by
//             the mass of Gamma(6.1271, 5.2740) per bucket, stretches that time into wall time
//             (more arrivals around midday, few at night). The workload starts at midnight.
// Approximations and additions (not from the paper):
//   - Only the batch class is generated (no interactive jobs).
//   - The size parameters were fitted on 128-node machines; for other sizes UHi = log2(procs),
//     ULow = min(1.2, UHi) and UMed = clamp(UHi - 2, ULow, UHi) (UMed = 5 at 128, as fitted).
//     A power-of-two size above procs is rounded down; sizes are finally clamped to
//     [1, procs].
//   - p follows the published generator, which is linear in the size itself (not its log2).
//   - The daily cycle is applied as a continuous time warp (arrival rate proportional to the
//     bucket weight) rather than the original's point-paying loop; same rate profile.
//   - Load: the model's own arrival rate is replaced. All nominal inter-arrival gaps are
//     multiplied by one factor c chosen in closed form so that the last submit time is
//     T = sum(runtime * size) / (procs * load); the offered load
//     sum(runtime * size) / (procs * (last submit - first submit)) then equals `load` up to
//     rounding submit times to whole seconds. The daily cycle keeps its 24-hour period.
//   - run_limit (the user estimate) is the runtime rounded up to the next "round" limit
//     (1, 5, 10, 15, 30 min, 1, 2, 4, 8, 12, 24, 48 h; above that whole days).
//   - Users u1..uK with K = clamp(round(sqrt(jobs)), 1, 100), index floor(K * u^2) for a
//     uniform u, so low-numbered users submit more.
// Determinism: one std::mt19937_64 seeded with `seed` (its output is fixed by the standard);
// uniform, normal (Marsaglia polar) and gamma (Marsaglia-Tsang) variates are computed here from
// its raw output, never with std::*_distribution. NOTE: the variates also use std::log,
// std::exp, std::exp2, std::pow and std::sqrt; sqrt is exact everywhere, the others are
// accurate to about 1 ulp in common C libraries, so a different libm could in rare cases move
// a value by one second.
// Jobs have ids 1..N in submit order, one rigid size (min_tasks = max_tasks), the default
// queue, and `Workload::procs` = procs. Thread-safety: pure function.
#pragma once

#include <cstdint>

#include "sim/workload.h"

namespace sluice::sim {

struct LublinOptions {
  int64_t jobs = 1000;  // number of jobs
  int32_t procs = 128;  // machine size
  double load = 0.7;    // offered load, sum(runtime * size) / (procs * submit span)
  uint64_t seed = 1;
};

inline constexpr double kMinLoad = 1e-6;
inline constexpr double kMaxLoad = 1e6;

// REQUIRES: jobs >= 0, procs >= 1, kMinLoad <= load <= kMaxLoad (the CLI checks its flags).
Workload GenerateLublin(const LublinOptions& options);

}  // namespace sluice::sim
