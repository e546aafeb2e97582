// Parsing the sections of a primary request: order, rusage, span, same (R-RR-1).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/resreq/parser.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq {
namespace {

Primary PrimaryOf(std::string_view text) {
  ExprPool pool;
  Result<Request> request = Parse(text, pool);
  EXPECT_TRUE(request.has_value()) << text << ": " << request.error().message();
  if (!request.has_value()) return Primary{};
  EXPECT_EQ(request->alternatives.size(), 1u);
  EXPECT_EQ(request->alternatives[0].parts.size(), 1u);
  return request->alternatives[0].parts[0];
}

TEST(ResreqParseSectionsTest, EverySpanKindHasADistinctName) {
  std::set<std::string_view> names;
  for (SpanKind kind : kAllSpanKinds) {
    EXPECT_NE(ToString(kind), "internal");
    EXPECT_TRUE(names.insert(ToString(kind)).second) << ToString(kind);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(SpanKind::kPtile) + 1);
}

TEST(ResreqParseSectionsTest, EmptyTextMeansNoConstraints) {
  for (std::string_view text : {"", "   ", "\n\t"}) {
    SCOPED_TRACE(text);
    const Primary primary = PrimaryOf(text);
    EXPECT_TRUE(primary.Unconstrained());
    EXPECT_EQ(primary.count, 0);
  }
  ExprPool pool;
  Result<Request> empty = Parse("", pool);
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(*empty, UnconstrainedRequest());
}

TEST(ResreqParseSectionsTest, OrderKeysKeepTheirOrderAndDirection) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::vector<OrderKey> want;
  };
  const Case cases[] = {
      {"descending", "order[-slots]", {{"slots", true}}},
      {"ascending", "order[mem]", {{"mem", false}}},
      {"explicit plus", "order[+mem]", {{"mem", false}}},
      {"several", "order[-mem,slots]", {{"mem", true}, {"slots", false}}},
      {"lsf colon", "order[ -mem : +slots ]", {{"mem", true}, {"slots", false}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PrimaryOf(c.text).order, c.want);
  }
}

TEST(ResreqParseSectionsTest, RusageIsSortedByResource) {
  struct Case {
    std::string_view name;
    std::string_view text;
    std::vector<Rusage> want;
  };
  const Case cases[] = {
      {"one", "rusage[mem=4000]", {{"mem", 4000}}},
      {"colons", "rusage[mem=10:lic=1:gpu=2]", {{"gpu", 2}, {"lic", 1}, {"mem", 10}}},
      {"commas", "rusage[mem=10, gpu=0.5]", {{"gpu", 0.5}, {"mem", 10}}},
      {"zero", "rusage[gpu=0]", {{"gpu", 0}}},
      {"LSF memory units (megabytes)", "rusage[mem=105MB]", {{"mem", 105}}},
      {"gigabytes", "rusage[mem=2GB:lic=1]", {{"lic", 1}, {"mem", 2048}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PrimaryOf(c.text).rusage, c.want);
  }
}

TEST(ResreqParseSectionsTest, SpanIsOneHostOrPtile) {
  EXPECT_EQ(PrimaryOf("span[hosts=1]").span, (Span{.kind = SpanKind::kOneHost}));
  EXPECT_EQ(PrimaryOf("span[ptile=4]").span, (Span{.kind = SpanKind::kPtile, .ptile = 4}));
  EXPECT_EQ(PrimaryOf("span[ ptile = 1 ]").span, (Span{.kind = SpanKind::kPtile, .ptile = 1}));
  EXPECT_EQ(PrimaryOf("select[a]").span, Span{});
}

TEST(ResreqParseSectionsTest, SameTakesOneAttribute) {
  EXPECT_EQ(PrimaryOf("same[model]").same, "model");
  EXPECT_EQ(PrimaryOf("select[a]").same, "");
}

TEST(ResreqParseSectionsTest, SectionsComeInAnyOrder) {
  const Primary forward =
      PrimaryOf("select[type==linux] order[-slots] rusage[mem=100] span[ptile=2] same[model]");
  const Primary backward =
      PrimaryOf("same[model] span[ptile=2] rusage[mem=100] order[-slots] select[type==linux]");
  const Primary packed =
      PrimaryOf("same[model]span[ptile=2]rusage[mem=100]order[-slots]select[type==linux]");
  EXPECT_EQ(forward.fingerprint, backward.fingerprint);
  EXPECT_EQ(forward.fingerprint, packed.fingerprint);
  EXPECT_EQ(forward.order, backward.order);
  EXPECT_EQ(forward.rusage, backward.rusage);
  EXPECT_EQ(forward.same, "model");
  EXPECT_FALSE(forward.Unconstrained());
}

TEST(ResreqParseSectionsTest, LimitsAreInclusive) {
  std::string rusage = "rusage[";
  std::string order = "order[";
  for (size_t i = 0; i < kMaxRusage; ++i) rusage += (i ? ":r" : "r") + std::to_string(i) + "=1";
  for (size_t i = 0; i < kMaxOrderKeys; ++i) order += (i ? ",k" : "k") + std::to_string(i);
  EXPECT_EQ(PrimaryOf(rusage + "]").rusage.size(), kMaxRusage);
  EXPECT_EQ(PrimaryOf(order + "]").order.size(), kMaxOrderKeys);
}

}  // namespace
}  // namespace sluice::core::resreq
