#include "core/admission/reservation.h"

#include <vector>

#include <gtest/gtest.h>

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
      {"the order decides extra on a tie", 3, 0, {{100, 1, 4}, {100, 2, 2}}, {.shadow = 100, .extra = 1}},
      {"never fits from known ends", 10, 0, {{100, 1, 4}, {kInfinite, 2, 6}}, {.shadow = kInfinite, .extra = 0}},
      {"slot count fits now", 2, 3, {}, {.shadow = 40, .extra = 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Release> releases = c.releases;
    EXPECT_EQ(ComputeReservation(c.needed, c.free_now, /*now=*/40, releases), c.want);
  }
}

}  // namespace
}  // namespace sluice::core
