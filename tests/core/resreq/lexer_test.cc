// Lexer: token kinds, columns, numbers and strings, and lexical errors (R-RR-1, R-RR-5).
#include "core/resreq/lexer.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace sluice::core::resreq {
namespace {

std::vector<TokenKind> Kinds(const std::vector<Token>& tokens) {
  std::vector<TokenKind> kinds;
  for (const Token& token : tokens) kinds.push_back(token.kind);
  return kinds;
}

TEST(ResreqLexerTest, EveryTokenKindHasADistinctName) {
  std::set<std::string_view> names;
  for (TokenKind kind : kAllTokenKinds) {
    EXPECT_NE(ToString(kind), "internal") << static_cast<int>(kind);
    EXPECT_TRUE(names.insert(ToString(kind)).second) << ToString(kind);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(TokenKind::kOrOr) + 1);
}

TEST(ResreqLexerTest, SplitsOperatorsLongestFirst) {
  using K = TokenKind;
  struct Case {
    std::string_view name;
    std::string_view text;
    std::vector<K> want;
  };
  const Case cases[] = {
      {"empty", "", {K::kEnd}},
      {"blanks", " \t\r\n", {K::kEnd}},
      {"comparisons", "== != < <= > >=", {K::kEq, K::kNe, K::kLt, K::kLe, K::kGt, K::kGe, K::kEnd}},
      {"no spaces", "a<=-1", {K::kIdent, K::kLe, K::kMinus, K::kNumber, K::kEnd}},
      {"logic",
       "!a&&b||c",
       {K::kBang, K::kIdent, K::kAndAnd, K::kIdent, K::kOrOr, K::kIdent, K::kEnd}},
      {"punctuation",
       "[]{}(),:=",
       {K::kLBracket, K::kRBracket, K::kLBrace, K::kRBrace, K::kLParen, K::kRParen, K::kComma,
        K::kColon, K::kAssign, K::kEnd}},
      {"arithmetic",
       "1+2-3*4/5",
       {K::kNumber, K::kPlus, K::kNumber, K::kMinus, K::kNumber, K::kStar, K::kNumber, K::kSlash,
        K::kNumber, K::kEnd}},
      {"double minus", "--", {K::kMinus, K::kMinus, K::kEnd}},
      {"section", "select[x86_64]", {K::kIdent, K::kLBracket, K::kIdent, K::kRBracket, K::kEnd}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Kinds(Lex(c.text)), c.want);
  }
}

TEST(ResreqLexerTest, ColumnsAreOneBasedBytes) {
  const std::vector<Token> tokens = Lex("  mem >= 4000");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].column, 3);
  EXPECT_EQ(tokens[1].column, 7);
  EXPECT_EQ(tokens[2].column, 10);
  EXPECT_EQ(tokens[3].column, 14);  // end of input: length + 1
}

TEST(ResreqLexerTest, NamesTakeLettersDigitsUnderscoresAndDots) {
  const std::vector<Token> tokens = Lex("x86_64 rhel8.4 _tmp mem-1");
  ASSERT_EQ(tokens.size(), 7u);
  EXPECT_EQ(tokens[0].text, "x86_64");
  EXPECT_EQ(tokens[1].text, "rhel8.4");
  EXPECT_EQ(tokens[2].text, "_tmp");
  EXPECT_EQ(tokens[3].text, "mem");  // `-` is an operator, never part of a name
  EXPECT_EQ(tokens[4].kind, TokenKind::kMinus);
  EXPECT_EQ(tokens[5].kind, TokenKind::kNumber);
}

TEST(ResreqLexerTest, ReadsIntegersAndDecimals) {
  const std::vector<Token> tokens = Lex("4000 0.5 007");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].number, 4000);
  EXPECT_EQ(tokens[1].number, 0.5);
  EXPECT_EQ(tokens[2].number, 7);
  EXPECT_EQ(tokens[2].text, "007");
}

TEST(ResreqLexerTest, MemoryUnitsGiveMegabytes) {
  struct Case {
    std::string_view text;
    double megabytes;
  };
  const Case cases[] = {{"105MB", 105},  {"105M", 105},     {"4GB", 4096},  {"4g", 4096},
                        {"512KB", 0.5},  {"1.5GB", 1536},   {"2TB", 2097152}, {"1tb", 1048576},
                        {"100mb", 100},  {"1024K", 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::vector<Token> tokens = Lex(c.text);
    ASSERT_EQ(tokens.size(), 2u);
    EXPECT_EQ(tokens[0].kind, TokenKind::kNumber);
    EXPECT_EQ(tokens[0].number, c.megabytes);
    EXPECT_EQ(tokens[0].text, c.text);
  }
}

TEST(ResreqLexerTest, StringsUseEitherQuoteWithoutEscapes) {
  const std::vector<Token> tokens = Lex(R"("lin ux" 'say "hi"' "")");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].kind, TokenKind::kString);
  EXPECT_EQ(tokens[0].text, "lin ux");
  EXPECT_EQ(tokens[1].text, R"(say "hi")");
  EXPECT_EQ(tokens[2].text, "");
  EXPECT_EQ(tokens[2].column, 21);
  EXPECT_EQ(tokens[3].column, 23);
}

TEST(ResreqLexerTest, ErrorsEndTheTokensAtTheirColumn) {
  struct Case {
    std::string_view name;
    std::string_view text;
    int32_t column;
  };
  const std::string huge = "x>1" + std::string(400, '0');
  const Case cases[] = {
      {"bad character", "mem # 1", 5},
      {"single ampersand", "a & b", 3},
      {"single bar", "a | b", 3},
      {"unclosed string", R"(type=="linux)", 7},
      {"dot without digits", "mem>1.", 5},
      {"unknown unit", "mem>4000XB", 5},
      {"unit too long", "mem>4MBB", 5},
      {"huge number", huge, 3},
      {"control byte", "a\x01", 2},
      {"non-ascii", "caf\xc3\xa9", 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<Token> tokens = Lex(c.text);
    ASSERT_FALSE(tokens.empty());
    EXPECT_EQ(tokens.back().kind, TokenKind::kError);
    EXPECT_EQ(tokens.back().column, c.column);
    EXPECT_FALSE(tokens.back().error.empty());
  }
}

TEST(ResreqLexerTest, DescribeQuotesAndEscapesForMessages) {
  EXPECT_EQ(Describe(Token{.kind = TokenKind::kEnd}), "end of input");
  EXPECT_EQ(Describe(Token{.kind = TokenKind::kRBracket, .text = "]"}), "']'");
  EXPECT_EQ(Describe(Token{.kind = TokenKind::kString, .text = "linux"}), "string \"linux\"");
  EXPECT_EQ(Quote("a\x01"), "'a\\x01'");
  EXPECT_EQ(Quote(std::string(30, 'x')), "'" + std::string(24, 'x') + "...'");
}

}  // namespace
}  // namespace sluice::core::resreq
