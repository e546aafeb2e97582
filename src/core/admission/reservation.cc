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

Reservation ComputeReservation(int64_t needed, int64_t free_now, Instant now,
                               const std::set<RunningByEnd>& running,
                               std::vector<Release>& started) {
  if (free_now >= needed) return Reservation{.shadow = now, .extra = free_now - needed};
  auto by_end_then_order = [](const Release& a, const Release& b) {
    if (a.expected_end != b.expected_end) return a.expected_end < b.expected_end;
    return a.order < b.order;
  };
  std::sort(started.begin(), started.end(), by_end_then_order);
  // Everything that releases by `now` (running jobs at or past their end release at `now`)
  // comes first; the order among those matters only if they are enough for the head.
  auto it = running.begin();
  auto s = started.begin();
  int64_t early_slots = 0;
  for (; it != running.end() && it->end <= now; ++it) early_slots += it->slots;
  for (; s != started.end() && s->expected_end <= now; ++s) early_slots += s->slots;
  if (free_now + early_slots >= needed) {
    std::vector<Release> early;
    for (auto r = running.begin(); r != it; ++r) {
      early.push_back(Release{.expected_end = now, .order = r->start_seq, .slots = r->slots});
    }
    early.insert(early.end(), started.begin(), s);
    return ComputeReservation(needed, free_now, now, early);
  }
  int64_t free = free_now + early_slots;
  // The rest merged with this cycle's starts by (expected end, order); on equal ends the
  // running job goes first (its start order is earlier).
  while (it != running.end() || s != started.end()) {
    const bool take_running =
        s == started.end() || (it != running.end() && it->end <= s->expected_end);
    const Instant end = take_running ? it->end : s->expected_end;
    if (end == kInfinite) break;
    free += take_running ? (it++)->slots : (s++)->slots;
    if (free >= needed) return Reservation{.shadow = end, .extra = free - needed};
  }
  return Reservation{.shadow = kInfinite, .extra = 0};
}

}  // namespace sluice::core
