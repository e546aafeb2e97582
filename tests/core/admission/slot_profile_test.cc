#include "core/admission/slot_profile.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace sluice::core {
namespace {

// 4 slots free at t=100; running jobs release 2 at t=150, 3 at t=200 (one already past its
// end releases 1 at now), and one without a run limit never releases:
//   free(t) = 5 on [100, 150), 7 on [150, 200), 10 from 200 on.
SlotProfile Example() {
  return SlotProfile(/*now=*/100, /*free_now=*/4,
                     {{.expected_end = 200, .slots = 3},
                      {.expected_end = 150, .slots = 2},
                      {.expected_end = 90, .slots = 1},
                      {.expected_end = kInfinite, .slots = 6}});
}

TEST(SlotProfileTest, StepsFromReleases) {
  const SlotProfile p = Example();
  EXPECT_EQ(p.FreeAt(100), 5);
  EXPECT_EQ(p.FreeAt(149), 5);
  EXPECT_EQ(p.FreeAt(150), 7);
  EXPECT_EQ(p.FreeAt(200), 10);
  EXPECT_EQ(p.FreeAt(1'000'000), 10);
}

TEST(SlotProfileTest, EarliestFitOnTheBareProfileIsEasysShadow) {
  const SlotProfile p = Example();
  EXPECT_EQ(p.EarliestFit(5, 1000), 100);
  EXPECT_EQ(p.EarliestFit(6, 1000), 150);
  EXPECT_EQ(p.EarliestFit(10, kInfinite), 200);
  EXPECT_EQ(p.EarliestFit(11, 1), kInfinite);  // the unlimited job's 6 slots never return
}

// Conservative placement, worked by hand: head needs 8 for 100 s -> [200, 300) leaves 2 there;
// the second job needs 6 for 30 s: [100, 130) has 5, [150, 180) has 7 -> starts at 150.
// A third needing 4 for 100 s: from 100 only 5 ([100, 150)), then 7 ([150, 180) minus 6 = 1)
// fails; from 180: 7 on [180, 200), 2 on [200, 300): fails; from 300: 10 -> 300.
TEST(SlotProfileTest, JointPlacementInQueueOrder) {
  SlotProfile p = Example();
  const Instant head = p.EarliestFit(8, 100);
  ASSERT_EQ(head, 200);
  p.Reserve(head, head + 100, 8);
  const Instant second = p.EarliestFit(6, 30);
  ASSERT_EQ(second, 150);
  p.Reserve(second, second + 30, 6);
  EXPECT_EQ(p.FreeAt(150), 1);
  EXPECT_EQ(p.FreeAt(180), 7);
  EXPECT_EQ(p.FreeAt(250), 2);
  EXPECT_EQ(p.EarliestFit(4, 100), 300);
  EXPECT_EQ(p.EarliestFit(1, 100), 100);  // one slot is free everywhere
  // A backfill of 2 slots from now: fits until 150 (free 5), not into [150, 180) (free 1).
  EXPECT_TRUE(p.Fits(100, 150, 2));
  EXPECT_FALSE(p.Fits(100, 151, 2));
  EXPECT_TRUE(p.Fits(100, kInfinite, 1));
  // Unreserve undoes Reserve exactly.
  p.Unreserve(second, second + 30, 6);
  EXPECT_EQ(p.FreeAt(150), 7);
  EXPECT_EQ(p.EarliestFit(6, 30), 150);
}

TEST(SlotProfileTest, ReserveForeverAndEmptyIntervals) {
  SlotProfile p = Example();
  p.Reserve(150, kInfinite, 3);
  EXPECT_EQ(p.FreeAt(100), 5);
  EXPECT_EQ(p.FreeAt(150), 4);
  EXPECT_EQ(p.FreeAt(5000), 7);
  p.Reserve(120, 120, 100);  // empty: no change
  EXPECT_EQ(p.FreeAt(120), 5);
  EXPECT_TRUE(p.Fits(130, 130, 1000));
}

// Against a brute force over whole seconds on random small profiles.
TEST(SlotProfileTest, MatchesBruteForce) {
  std::mt19937_64 rng(7);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  constexpr Instant kNow = 10;
  constexpr Instant kHorizon = 200;  // past every change
  for (int round = 0; round < 300; ++round) {
    std::vector<Release> releases;
    for (int i = uniform(0, 5); i > 0; --i) {
      releases.push_back(Release{.expected_end = uniform(0, 60), .slots = uniform(1, 3)});
    }
    SlotProfile p(kNow, uniform(0, 3), releases);
    std::vector<int64_t> free(kHorizon, 0);
    for (Instant t = kNow; t < kHorizon; ++t) free[t] = p.FreeAt(t);
    for (int i = uniform(0, 4); i > 0; --i) {
      const Instant start = uniform(kNow, 80);
      const Instant end = start + uniform(0, 40);
      const int64_t slots = uniform(1, 3);
      p.Reserve(start, end, slots);
      for (Instant t = start; t < end; ++t) free[t] -= slots;
    }
    for (Instant t = kNow; t < kHorizon; ++t) ASSERT_EQ(p.FreeAt(t), free[t]) << "t=" << t;
    const int64_t slots = uniform(1, 6);
    const Duration duration = uniform(1, 50);
    Instant want = kInfinite;
    for (Instant t = kNow; t + duration < kHorizon && want == kInfinite; ++t) {
      bool ok = true;
      for (Instant u = t; u < t + duration; ++u) ok = ok && free[u] >= slots;
      if (ok) want = t;
    }
    ASSERT_EQ(p.EarliestFit(slots, duration), want) << "round " << round;
  }
}

}  // namespace
}  // namespace sluice::core
