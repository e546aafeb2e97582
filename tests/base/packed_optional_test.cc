// PackedOptional (base/packed_optional.h, issue 45): optional numbers in 8 bytes, read and
// written as std::optional is by the records' users.
#include "base/packed_optional.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace sluice {
namespace {

static_assert(sizeof(PackedOptional<int64_t>) == 8 && sizeof(PackedOptional<double>) == 8);

TEST(PackedOptionalTest, EmptyUntilSetAndEmptyAgainWhenReset) {
  PackedOptional<int64_t> time;
  EXPECT_FALSE(time.has_value());
  EXPECT_FALSE(time);
  EXPECT_EQ(time.value_or(-7), -7);
  time = 1764450000;
  ASSERT_TRUE(time);
  EXPECT_EQ(*time, 1764450000);
  time = std::nullopt;
  EXPECT_FALSE(time);
  time = std::optional<int64_t>(0);  // zero is a value, not "none"
  ASSERT_TRUE(time);
  EXPECT_EQ(*time, 0);
  time.reset();
  EXPECT_EQ(static_cast<std::optional<int64_t>>(time), std::nullopt);
}

TEST(PackedOptionalTest, KeepsEveryValueARowHolds) {
  for (int64_t v : {int64_t{-1}, int64_t{0}, std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min() + 1}) {
    const PackedOptional<int64_t> packed(v);
    EXPECT_EQ(static_cast<std::optional<int64_t>>(packed), std::optional<int64_t>(v));
  }
  for (double v : {0.0, -0.0, 0.001, 1e300, 12.5, std::numeric_limits<double>::quiet_NaN()}) {
    const std::optional<double> back = PackedOptional<double>(v);
    ASSERT_TRUE(back.has_value());
    EXPECT_TRUE(std::isnan(v) ? std::isnan(*back) : *back == v) << v;
    EXPECT_EQ(std::signbit(*back), std::signbit(v));
  }
  EXPECT_FALSE(PackedOptional<double>(std::optional<double>()).has_value());
}

}  // namespace
}  // namespace sluice
