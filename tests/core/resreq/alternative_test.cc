// Alternative requests `{...} || {...}` (R-RR-3).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/resreq/parser.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq {
namespace {

Request RequestOf(std::string_view text, ExprPool& pool) {
  Result<Request> request = Parse(text, pool);
  EXPECT_TRUE(request.has_value()) << text << ": " << request.error().message();
  return request.has_value() ? *request : Request{};
}

// Parts per alternative, e.g. {2, 1} for `{2*{..} + 1*{..}} || {..}`.
std::vector<size_t> Shape(const Request& request) {
  std::vector<size_t> shape;
  for (const Compound& compound : request.alternatives) shape.push_back(compound.parts.size());
  return shape;
}

TEST(ResreqParseAlternativeTest, Shapes) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::vector<size_t> shape;
  };
  const Case cases[] = {
      {"bare primary", "select[a]", {1}},
      {"braced primary", "{select[a]}", {1}},
      {"two primaries", "{select[a]} || {select[b]}", {1, 1}},
      {"compound then primary",
       "{2*{select[type==a]} + 1*{select[type==b]}} || {select[type==c]}",
       {2, 1}},
      {"unbraced compounds", "2*{select[a]} + 1*{} || 3*{select[b]}", {2, 1}},
      {"empty alternative", "{} || {select[a]}", {1, 1}},
      {"three", "{select[a]} || {select[b]} || {select[c]}", {1, 1, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExprPool pool;
    EXPECT_EQ(Shape(RequestOf(c.text, pool)), c.shape);
  }
}

TEST(ResreqParseAlternativeTest, AlternativesKeepTheirOrder) {
  ExprPool pool;
  const Request request = RequestOf("{select[b] rusage[mem=2]} || {select[a] rusage[mem=1]}", pool);
  ASSERT_EQ(request.alternatives.size(), 2u);
  EXPECT_EQ(request.alternatives[0].parts[0].rusage[0].amount, 2);
  EXPECT_EQ(request.alternatives[1].parts[0].rusage[0].amount, 1);
  EXPECT_EQ(request.alternatives[0].parts[0].count, 0);
}

TEST(ResreqParseAlternativeTest, SwappingAlternativesChangesTheFingerprint) {
  ExprPool pool;
  const Request ab = RequestOf("{select[a]} || {select[b]}", pool);
  const Request ba = RequestOf("{select[b]} || {select[a]}", pool);
  EXPECT_NE(ab.fingerprint, ba.fingerprint);
  EXPECT_EQ(ab.alternatives[0].parts[0].fingerprint, ba.alternatives[1].parts[0].fingerprint);
}

TEST(ResreqParseAlternativeTest, UpToTheLimitOfAlternatives) {
  std::string text = "{}";
  for (size_t i = 1; i < kMaxAlternatives; ++i) text += "||{}";
  ExprPool pool;
  EXPECT_EQ(RequestOf(text, pool).alternatives.size(), kMaxAlternatives);
}

}  // namespace
}  // namespace sluice::core::resreq
