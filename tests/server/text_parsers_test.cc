// The server's one parser of integers and lists (text_parsers.h).
#include "server/text_parsers.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace sluice::server {
namespace {

TEST(TextParsersTest, IntegersAreWholeDecimalNumbers) {
  EXPECT_EQ(ParseInteger("42"), 42);
  EXPECT_EQ(ParseInteger("-7"), -7);
  EXPECT_EQ(ParseInteger("9223372036854775807"), std::numeric_limits<int64_t>::max());
  for (const char* bad : {"", "12abc", " 1", "1 ", "+1", "0x10", "1.5", "9223372036854775808"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseInteger(bad).has_value());
  }
}

TEST(TextParsersTest, AQueryIntegerOutOfItsRangeNamesTheKeyAndTheRange) {
  EXPECT_EQ(QueryInteger("limit", "5", 1, 10).value(), 5);
  const Result<int64_t> low = QueryInteger("limit", "0", 1, 10);
  ASSERT_FALSE(low);
  EXPECT_EQ(low.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(low.error().message(), "limit: expected an integer in [1, 10], got '0'");
  EXPECT_FALSE(QueryInteger("lines", "ten", 1, 10));
}

TEST(TextParsersTest, ListsDropEmptyItems) {
  EXPECT_EQ(SplitList("a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitList(",a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(SplitList("").empty());
  EXPECT_TRUE(SplitList(",,").empty());
}

}  // namespace
}  // namespace sluice::server
