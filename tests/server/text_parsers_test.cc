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

namespace sluice::server {
namespace {

// Issue 47.7: `jobs -s bogus` listed nothing instead of saying what was wrong; LSF's and
// Slurm's state names are what users type.
TEST(ParseJobStatesTest, ReadsEveryDialectAndRefusesTheRestNamingTheValidStates) {
  EXPECT_EQ(ParseJobStates("RUN,pend").value(), (std::vector<std::string>{"RUNNING", "PENDING"}));
  EXPECT_EQ(ParseJobStates("R,PD,CD,F,CA").value(),
            (std::vector<std::string>{"RUNNING", "PENDING", "DONE", "EXIT", "CANCELLED"}));
  EXPECT_EQ(ParseJobStates("running,RUNNING,Run").value(), (std::vector<std::string>{"RUNNING"}));
  EXPECT_EQ(ParseJobStates("psusp,held").value(), (std::vector<std::string>{"HELD"}));
  EXPECT_TRUE(ParseJobStates("").value().empty());
  const Result<std::vector<std::string>> bad = ParseJobStates("RUNNING,bogus");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("no job state 'BOGUS'"), std::string::npos);
  EXPECT_NE(bad.error().message().find("PENDING, HELD"), std::string::npos);
}

}  // namespace
}  // namespace sluice::server
