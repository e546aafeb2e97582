// Parse errors per class: the code is kInvalidArgument and the column points at the offending
// token (R-RR-5). Tests compare codes and columns, never message text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/resreq/parser.h"

namespace sluice::core::resreq {
namespace {

struct Case {
  std::string_view name;
  std::string text;
  int32_t column;
};

void ExpectErrors(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + ": " + c.text.substr(0, 80));
    ExprPool pool;
    ParseError error;
    Result<Request> result = Parse(c.text, pool, &error);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(result.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(error.column, c.column);
    EXPECT_FALSE(error.message.empty());
    EXPECT_TRUE(result.error().message().starts_with("column " + std::to_string(c.column) + ": "))
        << result.error().message();
  }
}

std::string Repeat(std::string_view piece, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

TEST(ResreqParseErrorTest, Lexical) {
  ExpectErrors({
      {"bad character", "select[mem # 1]", 12},
      {"single ampersand", "select[a & b]", 10},
      {"single bar", "select[a | b]", 10},
      {"unclosed string", "select[t==\"x]", 11},
      {"unknown unit after number", "select[mem>4000XB]", 12},
      {"dot without digits", "rusage[mem=1.]", 12},
      {"number too large", "select[a>1" + std::string(400, '0') + "]", 10},
      {"control byte", "select[a\x02]", 9},
  });
}

TEST(ResreqParseErrorTest, Sections) {
  ExpectErrors({
      {"unknown section", "selekt[a]", 1},
      {"section without bracket", "select a", 8},
      {"duplicate section", "select[a] select[b]", 11},
      {"trailing name", "select[a] x", 11},
      {"trailing operator", "select[a] &&", 11},
      {"same without name", "same[]", 6},
      {"same with two names", "same[a b]", 8},
      {"same unclosed", "same[a", 7},
  });
}

TEST(ResreqParseErrorTest, SelectExpressions) {
  ExpectErrors({
      {"empty select", "select[]", 8},
      {"missing right operand", "select[mem>]", 12},
      {"missing and operand", "select[a &&]", 12},
      {"unclosed select", "select[a", 9},
      {"two expressions", "select[a b]", 10},
      {"assignment", "select[type=linux]", 12},
      {"chained comparison", "select[a<b<c]", 11},
      {"value as condition", "select[mem+1]", 8},
      {"number as condition", "select[1]", 8},
      {"string as condition", "select['x' && a]", 8},
      {"negated value", "select[!(mem+1)]", 9},
      {"condition as value", "select[(a==b)+1>0]", 8},
      {"condition compared", "select[a==(b==c)]", 11},
      {"condition negated arithmetically", "select[-(a==b)<1]", 9},
      {"unclosed parenthesis", "select[(a]", 10},
      {"empty parentheses", "select[()]", 9},
      {"defined without name", "select[defined()]", 16},
      {"defined unclosed", "select[defined(a]", 17},
      {"defined of a number", "select[defined(1)]", 16},
      {"brace in select", "select[{a}]", 8},
  });
}

TEST(ResreqParseErrorTest, NestingLimit) {
  const int past = kMaxNesting + 1;
  const int32_t column = 8 + kMaxNesting;  // the first level past the limit
  ExpectErrors({
      {"parentheses", "select[" + std::string(past, '(') + "a" + std::string(past, ')') + "]",
       column},
      {"negations", "select[" + std::string(past, '!') + "a]", column},
      {"unary minus", "select[" + std::string(past, '-') + "a>1]", column},
      {"mixed", "select[" + Repeat("!(", past) + "a" + std::string(past, ')') + "]", column},
  });
}

TEST(ResreqParseErrorTest, Rusage) {
  std::string too_many = "rusage[";
  for (size_t i = 0; i <= kMaxRusage; ++i) too_many += (i ? ":r" : "r") + std::to_string(i) + "=1";
  ExpectErrors({
      {"empty", "rusage[]", 8},
      {"negative amount", "rusage[mem=-5]", 12},
      {"duplicate resource", "rusage[mem=1:gpu=1:mem=2]", 20},
      {"missing equals", "rusage[mem]", 11},
      {"missing amount", "rusage[mem=]", 12},
      {"name as amount", "rusage[mem=a]", 12},
      {"trailing separator", "rusage[mem=1:]", 14},
      {"too many entries", too_many + "]", static_cast<int32_t>(too_many.rfind(":r") + 2)},
  });
}

TEST(ResreqParseErrorTest, Order) {
  std::string too_many = "order[";
  for (size_t i = 0; i <= kMaxOrderKeys; ++i) too_many += (i ? ",k" : "k") + std::to_string(i);
  ExpectErrors({
      {"empty", "order[]", 7},
      {"sign without name", "order[-]", 8},
      {"duplicate key", "order[mem,-mem]", 12},
      {"number key", "order[1]", 7},
      {"too many keys", too_many + "]", static_cast<int32_t>(too_many.rfind(",k") + 2)},
  });
}

TEST(ResreqParseErrorTest, Span) {
  ExpectErrors({
      {"several hosts", "span[hosts=2]", 12},
      {"zero hosts", "span[hosts=0]", 12},
      {"zero ptile", "span[ptile=0]", 12},
      {"fractional ptile", "span[ptile=1.5]", 12},
      {"negative ptile", "span[ptile=-1]", 12},
      {"huge ptile", "span[ptile=99999999999]", 12},
      {"unknown key", "span[host=1]", 6},
      {"two keys", "span[ptile=2 hosts=1]", 14},
      {"empty", "span[]", 6},
  });
}

TEST(ResreqParseErrorTest, Compound) {
  ExpectErrors({
      {"zero count", "0*{}", 1},
      {"fractional count", "1.5*{}", 1},
      {"huge count", "3000000000*{}", 1},
      {"missing star", "2{}", 2},
      {"missing brace", "2*select[a]", 3},
      {"dangling plus", "2*{select[a]} +", 16},
      {"part without count", "2*{} + select[a]", 8},
      {"nested count", "2*{2*{}}", 4},
      {"unclosed part", "2*{select[a]", 13},
      {"too many parts", "1*{}" + Repeat("+1*{}", kMaxParts),
       static_cast<int32_t>(4 + 5 * (kMaxParts - 1) + 2)},
  });
}

TEST(ResreqParseErrorTest, Alternatives) {
  ExpectErrors({
      {"bare primaries", "select[a] || select[b]", 11},
      {"dangling or", "{select[a]} ||", 15},
      {"unclosed brace", "{select[a]", 11},
      {"plus after braced primary", "{select[a]} + 1*{}", 13},
      {"nested braces", "{{select[a]}}", 2},
      {"missing or", "{select[a]} {select[b]}", 13},
      {"too many alternatives", "{}" + Repeat("||{}", kMaxAlternatives),
       static_cast<int32_t>(2 + 4 * (kMaxAlternatives - 1) + 3)},
  });
}

TEST(ResreqParseErrorTest, InputLength) {
  const std::string longest = "select[" + std::string(kMaxInputBytes - 8, 'a') + "]";
  ASSERT_EQ(longest.size(), kMaxInputBytes);
  ExprPool pool;
  EXPECT_TRUE(Parse(longest, pool).has_value());
  ExpectErrors({{"one byte too long", longest + " ", static_cast<int32_t>(kMaxInputBytes + 1)}});
}

TEST(ResreqParseErrorTest, TheFirstErrorInTheTextWins) {
  ExpectErrors({
      {"syntax before a bad character", "select[] #", 8},
      {"bad character before syntax", "# select[]", 1},
  });
}

TEST(ResreqParseErrorTest, ErrorOutputIsOptional) {
  ExprPool pool;
  Result<Request> result = Parse("select[mem>]", pool);
  ASSERT_FALSE(result.has_value());
  EXPECT_TRUE(result.error().message().starts_with("column 12: "));
}

}  // namespace
}  // namespace sluice::core::resreq
