#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice {
namespace {

TEST(Utf8Test, WellFormedSequencesHaveTheirLength) {
  EXPECT_EQ(Utf8SequenceLength("a", 0), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xc3\xa9", 0), 2u);          // é
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82\xac", 0), 3u);      // €
  EXPECT_EQ(Utf8SequenceLength("\xf0\x9f\x98\x80", 0), 4u);  // U+1F600
  EXPECT_EQ(FirstInvalidUtf8("plain \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), std::string::npos);
}

TEST(Utf8Test, IllFormedSequencesAreRefusedWhereTheyStart) {
  EXPECT_EQ(Utf8SequenceLength("\xff", 0), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xc0\xaf", 0), 0u);                  // overlong '/'
  EXPECT_EQ(Utf8SequenceLength("\xe0\x80\xaf", 0), 0u);              // overlong, 3 bytes
  EXPECT_EQ(Utf8SequenceLength("\xed\xa0\x80", 0), 0u);              // a surrogate
  EXPECT_EQ(Utf8SequenceLength("\xf4\x90\x80\x80", 0), 0u);          // above U+10FFFF
  EXPECT_EQ(Utf8SequenceLength(std::string("\xe2\x82", 2), 0), 0u);  // cut off at the end
  EXPECT_EQ(FirstInvalidUtf8("ok\xc3\xa9 then \xff"), 10u);
  EXPECT_EQ(FirstInvalidUtf8("/%FF is fine, \x80 is not"), 14u);
}

}  // namespace
}  // namespace sluice
