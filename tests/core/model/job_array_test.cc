// The array specification grammar and the element id packing (R-UX-3).
#include "core/model/job_array.h"

#include <gtest/gtest.h>

#include "base/array_ids.h"

namespace sluice::core {
namespace {

TEST(ArraySpecTest, ParsesRangesListsStepsAndACap) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::vector<int32_t> indices;
    int32_t cap;
  };
  const Case cases[] = {
      {"one index", "7", {7}, 0},
      {"range", "1-4", {1, 2, 3, 4}, 0},
      {"range with cap", "0-3%2", {0, 1, 2, 3}, 2},
      {"step", "1-9:4", {1, 5, 9}, 0},
      {"list", "1,5,7-9", {1, 5, 7, 8, 9}, 0},
      {"overlap sorted unique", "5-6,1-5", {1, 2, 3, 4, 5, 6}, 0},
      {"list with step and cap", "1,3,5-9:2%10", {1, 3, 5, 7, 9}, 10},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<ArraySpec> spec = ParseArraySpec(c.text);
    ASSERT_TRUE(spec.has_value()) << spec.error().ToString();
    EXPECT_EQ(spec->indices, c.indices);
    EXPECT_EQ(spec->cap, c.cap);
  }
}

TEST(ArraySpecTest, RefusesBadTextNamingTheColumn) {
  for (std::string_view text : {"", "a", "1-", "5-1", "1-9:0", "1%0", "1%", "-3", "1,,2", "1-2x",
                                "99999999999", "0-20000000"}) {
    SCOPED_TRACE(text);
    Result<ArraySpec> spec = ParseArraySpec(text);
    ASSERT_FALSE(spec.has_value());
    EXPECT_EQ(spec.error().code(), StatusCode::kInvalidArgument);
  }
}

TEST(ArrayIdsTest, ElementIdsPackTheArrayAndTheIndex) {
  const JobId element = ArrayElementId(12, 3);
  EXPECT_TRUE(IsArrayElement(element));
  EXPECT_FALSE(IsArrayElement(12));
  EXPECT_EQ(ArrayIdOf(element), 12);
  EXPECT_EQ(ArrayIndexOf(element), 3);
  EXPECT_EQ(ArrayIndexOf(ArrayElementId(kMaxArrayJobId, 0)), 0);
  EXPECT_LT(ArrayElementId(12, 3), ArrayElementId(12, 4));
  EXPECT_EQ(FormatJobId(element), "12[3]");
  EXPECT_EQ(FormatJobId(12), "12");
}

TEST(ElementStateTest, EveryStateHasAName) {
  for (ElementState s : {ElementState::kWaiting, ElementState::kHeld, ElementState::kQueued,
                         ElementState::kDone, ElementState::kExit, ElementState::kCancelled}) {
    EXPECT_NE(ToString(s), "?");
  }
}

}  // namespace
}  // namespace sluice::core
