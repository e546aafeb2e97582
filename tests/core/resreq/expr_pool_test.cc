// ExprPool: hash-consing of select expressions (R-RR-4): same structure, same id.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/resreq/expr.h"
#include "core/resreq/parser.h"

namespace sluice::core::resreq {
namespace {

ExprId SelectOf(std::string_view text, ExprPool& pool) {
  Result<Request> request = Parse(text, pool);
  EXPECT_TRUE(request.has_value()) << text << ": " << request.error().message();
  if (!request.has_value()) return kNoExpr;
  return request->alternatives[0].parts[0].select;
}

TEST(ResreqExprPoolTest, EveryOpHasADistinctName) {
  std::set<std::string_view> names;
  for (ExprOp op : kAllExprOps) {
    EXPECT_NE(ToString(op), "internal") << static_cast<int>(op);
    EXPECT_TRUE(names.insert(ToString(op)).second) << ToString(op);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(ExprOp::kTag) + 1);
}

TEST(ResreqExprPoolTest, EveryOpIsExactlyOneOfValueOrCondition) {
  int conditions = 0;
  for (ExprOp op : kAllExprOps) conditions += IsCondition(op) ? 1 : 0;
  EXPECT_EQ(conditions, 11);  // 6 comparisons, !, &&, ||, defined, tag
}

TEST(ResreqExprPoolTest, SameTextGivesSameId) {
  ExprPool pool;
  const ExprId a = SelectOf("select[type==linux && mem>4000]", pool);
  const ExprId b = SelectOf("select[ type == linux&&mem > 4000 ]", pool);
  const ExprId c = SelectOf("select[(type==linux) && (mem>4000)] rusage[mem=1]", pool);
  EXPECT_NE(a, kNoExpr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
}

TEST(ResreqExprPoolTest, DifferentStructureGivesDifferentIds) {
  ExprPool pool;
  struct Case {
    std::string_view name;
    std::string_view lhs;
    std::string_view rhs;
  };
  const Case cases[] = {
      {"operator", "select[mem>1]", "select[mem>=1]"},
      {"number", "select[mem>1]", "select[mem>1.5]"},
      {"name", "select[mem>1]", "select[swp>1]"},
      {"operand order", "select[a && b]", "select[b && a]"},
      {"word vs string", "select[type==linux]", "select[type==\"linux\"]"},
      {"tag vs defined", "select[gpu]", "select[defined(gpu)]"},
      {"grouping", "select[a+b+c>1]", "select[a+(b+c)>1]"},
      {"and grouping", "select[a && b && c]", "select[a && (b && c)]"},
      {"minus vs plus", "select[a-b>1]", "select[a+b>1]"},
      {"divide vs multiply", "select[a/b>1]", "select[a*b>1]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_NE(SelectOf(c.lhs, pool), SelectOf(c.rhs, pool));
  }
}

TEST(ResreqExprPoolTest, SubexpressionsAreShared) {
  ExprPool pool;
  const ExprId whole = SelectOf("select[type==linux && mem>4000]", pool);
  const size_t size = pool.size();
  const ExprId part = SelectOf("select[mem>4000]", pool);
  EXPECT_EQ(pool.size(), size);  // nothing new was interned
  ASSERT_EQ(pool.op(whole), ExprOp::kAnd);
  EXPECT_EQ(pool.operands(whole)[1].id, part);
  const ExprId other = SelectOf("select[mem>4000 || type==linux]", pool);
  EXPECT_EQ(pool.operands(other)[0].id, part);
  EXPECT_EQ(pool.operands(other)[1].id, pool.operands(whole)[0].id);
}

TEST(ResreqExprPoolTest, BuildersInternLeavesOnce) {
  ExprPool pool;
  EXPECT_EQ(pool.Ident("mem"), pool.Ident("mem"));
  EXPECT_NE(pool.Ident("mem"), pool.String("mem"));
  EXPECT_NE(pool.Tag("mem"), pool.Defined("mem"));
  EXPECT_EQ(pool.Number(0.0), pool.Number(-0.0));
  EXPECT_EQ(pool.text(pool.String("a b")), "a b");
  const std::vector<Operand> operands = {{.id = pool.Number(1)},
                                         {.id = pool.Number(2), .inverse = true}};
  const ExprId sum = pool.Chain(ExprOp::kSum, operands);
  EXPECT_EQ(pool.operands(sum).size(), 2u);
  EXPECT_TRUE(pool.operands(sum)[1].inverse);
}

TEST(ResreqExprPoolTest, StructuralHashesAgreeAcrossPools) {
  ExprPool first;
  ExprPool second;
  SelectOf("select[unrelated && other>3]", second);  // shifts the ids of `second`
  const ExprId a = SelectOf("select[type==linux && mem>4000]", first);
  const ExprId b = SelectOf("select[type==linux && mem>4000]", second);
  EXPECT_NE(a, b);
  EXPECT_EQ(first.StructuralHash(a), second.StructuralHash(b));
  EXPECT_NE(first.StructuralHash(a), first.StructuralHash(first.operands(a)[0].id));
  EXPECT_EQ(first.StructuralHash(kNoExpr), 0u);
}

}  // namespace
}  // namespace sluice::core::resreq
