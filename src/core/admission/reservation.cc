#include "core/admission/reservation.h"

#include <algorithm>

namespace sluice::core {

Reservation ComputeReservation(int64_t needed, int64_t free_now, Instant now,
                               std::vector<Release>& releases) {
  if (free_now >= needed) return Reservation{.shadow = now, .extra = free_now - needed};
  std::sort(releases.begin(), releases.end(), [](const Release& a, const Release& b) {
    if (a.expected_end != b.expected_end) return a.expected_end < b.expected_end;
    return a.order < b.order;
  });
  int64_t free = free_now;
  for (const Release& release : releases) {
    if (release.expected_end == kInfinite) break;
    free += release.slots;
    if (free >= needed) return Reservation{.shadow = release.expected_end, .extra = free - needed};
  }
  return Reservation{.shadow = kInfinite, .extra = 0};
}

}  // namespace sluice::core
