// Parsing select[] expressions: precedence, chains, tags, defined(), literals (R-RR-1).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/resreq/parser.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq {
namespace {

ExprId SelectOf(std::string_view text, ExprPool& pool) {
  Result<Request> request = Parse(text, pool);
  EXPECT_TRUE(request.has_value()) << text.substr(0, 80) << ": " << request.error().message();
  if (!request.has_value()) return kNoExpr;
  return request->alternatives[0].parts[0].select;
}

TEST(ResreqParseSelectTest, RootOpFollowsPrecedence) {
  struct Case {
    std::string_view name;
    std::string_view text;
    ExprOp root;
    std::string_view normalized;
  };
  const Case cases[] = {
      {"and binds tighter than or", "a || b && c", ExprOp::kOr, "a || b && c"},
      {"parentheses regroup", "(a || b) && c", ExprOp::kAnd, "(a || b) && c"},
      {"not takes a comparison", "!type==linux", ExprOp::kNot, "!(type==linux)"},
      {"not of a group", "!(a && b)", ExprOp::kNot, "!(a && b)"},
      {"comparison of sums", "mem + 1 * 2 > 3", ExprOp::kGt, "mem+1*2>3"},
      {"product groups", "(mem + 1) * 2 > 3", ExprOp::kGt, "(mem+1)*2>3"},
      {"unary minus", "-mem < -1", ExprOp::kLt, "-mem<-1"},
      {"double negation", "- -mem < 1", ExprOp::kLt, "--mem<1"},
      {"redundant parentheses", "((mem)) >= ((1))", ExprOp::kGe, "mem>=1"},
      {"all comparisons", "a==1 && b!=2 && c<3 && d<=4 && e>5 && f>=6", ExprOp::kAnd,
       "a==1 && b!=2 && c<3 && d<=4 && e>5 && f>=6"},
      {"string literal", "type == 'x86-64'", ExprOp::kEq, "type==\"x86-64\""},
      {"string holding a double quote", "note == 'say \"hi\"'", ExprOp::kEq, "note=='say \"hi\"'"},
      {"decimal", "load < 0.50", ExprOp::kLt, "load<0.5"},
      {"section names are plain names here", "select && order", ExprOp::kAnd, "select && order"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExprPool pool;
    const ExprId id = SelectOf("select[" + std::string(c.text) + "]", pool);
    ASSERT_NE(id, kNoExpr);
    EXPECT_EQ(pool.op(id), c.root);
    EXPECT_EQ(NormalizeExpr(id, pool), c.normalized);
  }
}

TEST(ResreqParseSelectTest, ChainsStayFlatWithTheirSigns) {
  ExprPool pool;
  const ExprId id = SelectOf("select[a - b + c / d * e > 0]", pool);
  const ExprId sum = pool.operands(id)[0].id;
  ASSERT_EQ(pool.op(sum), ExprOp::kSum);
  const auto terms = pool.operands(sum);
  ASSERT_EQ(terms.size(), 3u);
  EXPECT_FALSE(terms[0].inverse);
  EXPECT_TRUE(terms[1].inverse);
  EXPECT_FALSE(terms[2].inverse);
  ASSERT_EQ(pool.op(terms[2].id), ExprOp::kProduct);
  const auto factors = pool.operands(terms[2].id);
  ASSERT_EQ(factors.size(), 3u);
  EXPECT_TRUE(factors[1].inverse);
  EXPECT_FALSE(factors[2].inverse);
}

TEST(ResreqParseSelectTest, BareNamesAsConditionsAreTags) {
  struct Case {
    std::string_view name;
    std::string_view text;
    ExprOp root;
  };
  const Case cases[] = {
      {"alone", "gpu", ExprOp::kTag},
      {"parenthesized", "(gpu)", ExprOp::kTag},
      {"negated", "!gpu", ExprOp::kNot},
      {"in a chain", "fast && ib", ExprOp::kAnd},
      {"defined()", "defined(gpu)", ExprOp::kDefined},
      {"defined without parentheses is a name", "defined", ExprOp::kTag},
      {"defined compared", "defined == 1", ExprOp::kEq},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExprPool pool;
    const ExprId id = SelectOf("select[" + std::string(c.text) + "]", pool);
    ASSERT_NE(id, kNoExpr);
    EXPECT_EQ(pool.op(id), c.root);
  }
  ExprPool pool;
  const ExprId chain = SelectOf("select[fast && ib]", pool);
  EXPECT_EQ(pool.op(pool.operands(chain)[0].id), ExprOp::kTag);
  EXPECT_EQ(pool.text(pool.operands(chain)[1].id), "ib");
}

TEST(ResreqParseSelectTest, NamesInComparisonsStayNames) {
  ExprPool pool;
  const ExprId id = SelectOf("select[type==linux]", pool);
  const auto operands = pool.operands(id);
  EXPECT_EQ(pool.op(operands[0].id), ExprOp::kIdent);
  EXPECT_EQ(pool.op(operands[1].id), ExprOp::kIdent);
  EXPECT_EQ(pool.text(operands[1].id), "linux");
}

TEST(ResreqParseSelectTest, NestingUpToTheLimitParses) {
  ExprPool pool;
  const std::string deep = std::string(kMaxNesting, '(') + "a" + std::string(kMaxNesting, ')');
  EXPECT_EQ(pool.op(SelectOf("select[" + deep + "]", pool)), ExprOp::kTag);
  const std::string nots = std::string(kMaxNesting, '!') + "a";
  EXPECT_EQ(pool.op(SelectOf("select[" + nots + "]", pool)), ExprOp::kNot);
  const std::string minus = "a>" + std::string(kMaxNesting, '-') + "1";
  EXPECT_EQ(pool.op(SelectOf("select[" + minus + "]", pool)), ExprOp::kGt);
}

TEST(ResreqParseSelectTest, LongFlatListsCostNoDepth) {
  // Users list hosts by name; 3,000 alternatives are one flat kOr, not a 3,000-deep tree.
  std::string text = "select[host==h0";
  for (int i = 1; i < 3000; ++i) text += " || host==h" + std::to_string(i);
  text += "]";
  ExprPool pool;
  const ExprId id = SelectOf(text, pool);
  ASSERT_EQ(pool.op(id), ExprOp::kOr);
  EXPECT_EQ(pool.operands(id).size(), 3000u);
}

}  // namespace
}  // namespace sluice::core::resreq
