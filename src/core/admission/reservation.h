// The head's reservation under EASY backfill (R-SIM-1e), on interchangeable slots.
//
// Running jobs are ordered by (expected end, start order), expected end =
// max(start + estimate, now) — a job without a run limit never ends (kInfinite). Free slots
// accumulate along that order until the head's `needed` slots fit: that job's expected end
// is the shadow time S, and the surplus at S is `extra`. If the head cannot fit even when
// every job with a known end has ended, S is kInfinite and extra is 0 (nothing whose end is
// unknown may take slots the head will need).
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "base/time.h"
#include "core/model/cluster_state.h"

namespace sluice::core {

struct Release {
  Instant expected_end = 0;
  uint64_t order = 0;  // start order; the tie-break
  int64_t slots = 0;
};

struct Reservation {
  Instant shadow = kInfinite;
  int64_t extra = 0;

  friend bool operator==(const Reservation&, const Reservation&) = default;
};

// `releases` is sorted in place.
// If the head's slot count already fits now (its shape does not), S is `now`.
Reservation ComputeReservation(int64_t needed, int64_t free_now, Instant now,
                               std::vector<Release>& releases);

// The same reservation without sorting the running jobs (EASY, every cycle): `running` is
// ClusterState::running_by_end(), whose ends are not clamped to `now` (the jobs past their
// end all release at `now`, in start order); `started` are this cycle's starts, whose orders
// follow every running job's, and is sorted in place. Walks only the jobs it needs, plus
// those already past their end.
Reservation ComputeReservation(int64_t needed, int64_t free_now, Instant now,
                               const std::set<RunningByEnd>& running,
                               std::vector<Release>& started);

}  // namespace sluice::core
