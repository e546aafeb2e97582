// Compound requests `N*{...} + M*{...}` (R-RR-2).
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

std::vector<int32_t> Counts(const Compound& compound) {
  std::vector<int32_t> counts;
  for (const Primary& part : compound.parts) counts.push_back(part.count);
  return counts;
}

TEST(ResreqParseCompoundTest, PartsKeepTheirCountsAndSections) {
  ExprPool pool;
  const Request request =
      RequestOf("2*{select[type==a] rusage[mem=10]} + 4*{select[type==b] span[ptile=2]}", pool);
  ASSERT_EQ(request.alternatives.size(), 1u);
  const Compound& compound = request.alternatives[0];
  EXPECT_EQ(Counts(compound), (std::vector<int32_t>{2, 4}));
  EXPECT_EQ(compound.parts[0].rusage, (std::vector<Rusage>{{"mem", 10}}));
  EXPECT_EQ(compound.parts[1].span, (Span{.kind = SpanKind::kPtile, .ptile = 2}));
  EXPECT_NE(compound.parts[0].select, compound.parts[1].select);
}

TEST(ResreqParseCompoundTest, Shapes) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::vector<int32_t> counts;
  };
  const Case cases[] = {
      {"one part", "3*{select[a]}", {3}},
      {"empty parts", "1*{} + 1*{}", {1, 1}},
      {"spaces", " 2 * { select[a] } + 1 * { } ", {2, 1}},
      {"braced", "{2*{select[a]} + 1*{select[b]}}", {2, 1}},
      {"three", "1*{} + 2*{} + 3*{}", {1, 2, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ExprPool pool;
    const Request request = RequestOf(c.text, pool);
    ASSERT_EQ(request.alternatives.size(), 1u);
    EXPECT_EQ(Counts(request.alternatives[0]), c.counts);
  }
}

TEST(ResreqParseCompoundTest, ACountOfOneIsNotAPlainRequest) {
  ExprPool pool;
  const Request plain = RequestOf("select[a]", pool);
  const Request counted = RequestOf("1*{select[a]}", pool);
  EXPECT_EQ(plain.alternatives[0].parts[0].count, 0);
  EXPECT_EQ(counted.alternatives[0].parts[0].count, 1);
  EXPECT_NE(plain.fingerprint, counted.fingerprint);
}

TEST(ResreqParseCompoundTest, IdenticalPartsShareTheirSelect) {
  ExprPool pool;
  const Request request = RequestOf("1*{select[gpu && mem>10]} + 3*{select[gpu && mem>10]}", pool);
  const Compound& compound = request.alternatives[0];
  EXPECT_EQ(compound.parts[0].select, compound.parts[1].select);
  EXPECT_NE(compound.parts[0].fingerprint, compound.parts[1].fingerprint);  // counts differ
}

TEST(ResreqParseCompoundTest, UpToTheLimitOfParts) {
  std::string text = "1*{}";
  for (size_t i = 1; i < kMaxParts; ++i) text += "+1*{}";
  ExprPool pool;
  EXPECT_EQ(RequestOf(text, pool).alternatives[0].parts.size(), kMaxParts);
}

}  // namespace
}  // namespace sluice::core::resreq
