#include "core/admission/reservation.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace sluice::core {
namespace {

TEST(ReservationTest, TextbookShadowAndExtra) {
  struct Case {
    std::string_view name;
    int64_t needed;
    int64_t free_now;
    std::vector<Release> releases;
    Reservation want;
  };
  const Case cases[] = {
      {"fits once both released", 4, 2, {{100, 1, 3}, {50, 2, 1}}, {.shadow = 100, .extra = 2}},
      {"fits after the earliest end", 3, 2, {{100, 1, 3}, {50, 2, 1}}, {.shadow = 50, .extra = 0}},
      {"needs both releases", 5, 1, {{100, 1, 3}, {50, 2, 1}}, {.shadow = 100, .extra = 0}},
      {"ties broken by start order", 3, 0, {{100, 2, 4}, {100, 1, 2}}, {.shadow = 100, .extra = 3}},
      {"the order decides extra on a tie",
       3,
       0,
       {{100, 1, 4}, {100, 2, 2}},
       {.shadow = 100, .extra = 1}},
      {"never fits from known ends",
       10,
       0,
       {{100, 1, 4}, {kInfinite, 2, 6}},
       {.shadow = kInfinite, .extra = 0}},
      {"slot count fits now", 2, 3, {}, {.shadow = 40, .extra = 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Release> releases = c.releases;
    EXPECT_EQ(ComputeReservation(c.needed, c.free_now, /*now=*/40, releases), c.want);
  }
}

// The walk over running jobs kept by estimated end equals sorting everything each time:
// jobs past their end release at `now` in start order, this cycle's starts follow running
// jobs with the same end, unknown ends stop the walk.
TEST(ReservationTest, WalkByEndEqualsTheSort) {
  constexpr Instant kNow = 1000;
  std::mt19937 rng(8);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 3000; ++round) {
    SCOPED_TRACE(round);
    std::set<RunningByEnd> running;
    std::set<uint64_t> seqs;
    std::vector<Release> all;
    const int jobs = pick(0, 12);
    for (int j = 0; j < jobs; ++j) {
      // Ends bunched around now (past, now, ties) and some unknown.
      const Instant end = pick(0, 9) == 0 ? kInfinite : kNow + pick(-6, 6) * 5;
      const auto seq = static_cast<uint64_t>(pick(1, 1000));
      if (!seqs.insert(seq).second) continue;  // start orders are unique
      const RunningByEnd entry{.end = end, .start_seq = seq, .slots = pick(1, 8)};
      running.insert(entry);
      all.push_back(Release{
          .expected_end = std::max(end, kNow), .order = entry.start_seq, .slots = entry.slots});
    }
    std::vector<Release> started;
    const int starts = pick(0, 4);
    for (int i = 0; i < starts; ++i) {
      // -1: a negative run limit ends before now.
      const Instant end = pick(0, 6) == 0 ? kInfinite : kNow + pick(-1, 6) * 5;
      started.push_back(
          Release{.expected_end = end, .order = (uint64_t{1} << 62) + i, .slots = pick(1, 8)});
    }
    all.insert(all.end(), started.begin(), started.end());
    const int64_t needed = pick(1, 40);
    const int64_t free_now = pick(0, 10);
    const Reservation want = ComputeReservation(needed, free_now, kNow, all);
    EXPECT_EQ(ComputeReservation(needed, free_now, kNow, running, started), want);
  }
}

}  // namespace
}  // namespace sluice::core
