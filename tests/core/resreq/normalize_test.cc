// Normalize: the canonical text, and the round trip Parse(Normalize(r)) == r (R-RR-4).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/resreq/parser.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq {
namespace {

struct Case {
  std::string_view name;
  std::string_view text;
  std::string_view normalized;
};

const Case kCases[] = {
    {"empty", "", ""},
    {"blank", "  ", ""},
    {"spec example", "select[type==linux && mem>4000]", "select[type==linux && mem>4000]"},
    {"spaces removed", "select[ type == linux&&mem > 4000 ]", "select[type==linux && mem>4000]"},
    {"sections sorted", "same[model] span[ptile=2] rusage[mem=100] order[-slots] select[gpu]",
     "select[gpu] order[-slots] rusage[mem=100] span[ptile=2] same[model]"},
    {"rusage sorted", "rusage[mem=10,gpu=1,lic=2]", "rusage[gpu=1:lic=2:mem=10]"},
    {"order keys", "order[+mem : -slots]", "order[mem,-slots]"},
    {"one host", "span[hosts=1]", "span[hosts=1]"},
    {"numbers", "select[load<0.50 && mem>=007] rusage[mem=1.0]",
     "select[load<0.5 && mem>=7] rusage[mem=1]"},
    {"quotes", "select[type=='linux' && note==\"it's\" && q=='say \"x\"']",
     "select[type==\"linux\" && note==\"it's\" && q=='say \"x\"']"},
    {"redundant parentheses", "select[((a)) && (b==(c))]", "select[a && b==c]"},
    {"needed parentheses", "select[(a || b) && !(c && d) && (x+y)*2>1]",
     "select[(a || b) && !(c && d) && (x+y)*2>1]"},
    {"nested chains kept", "select[(a && b) && c && (d || e || (f || g))]",
     "select[(a && b) && c && (d || e || (f || g))]"},
    {"arithmetic grouping", "select[a-(b-c)>(a-b)-c && a/(b*c)>1]",
     "select[a-(b-c)>(a-b)-c && a/(b*c)>1]"},
    {"unary minus", "select[- - mem < -(1+2) && x>-y*2]", "select[--mem<-(1+2) && x>-y*2]"},
    {"not forms", "select[!a && !!b && !x==1 && !(y<2)]", "select[!a && !!b && !(x==1) && !(y<2)]"},
    {"defined", "select[defined ( gpu ) || defined]", "select[defined(gpu) || defined]"},
    {"braced single primary", "{select[a]}", "select[a]"},
    {"compound", "2 * { select[a] } + 1*{}", "2*{select[a]} + 1*{}"},
    {"braced compound", "{2*{select[a]}}", "2*{select[a]}"},
    {"alternatives", "{2*{select[type==a]}+1*{select[type==b]}}||{select[type==c]}",
     "{2*{select[type==a]} + 1*{select[type==b]}} || {select[type==c]}"},
    {"unbraced compound alternatives", "2*{}||{ }", "{2*{}} || {}"},
    {"large number", "rusage[mem=123456789012345678901234567890]",
     "rusage[mem=123456789012345677877719597056]"},
    {"tiny number", "select[x>0.000000000000000000000000000001]",
     "select[x>0.000000000000000000000000000001]"},
};

TEST(ResreqNormalizeTest, CanonicalText) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    ExprPool pool;
    Result<Request> request = Parse(c.text, pool);
    ASSERT_TRUE(request.has_value()) << request.error().message();
    EXPECT_EQ(Normalize(*request, pool), c.normalized);
  }
}

TEST(ResreqNormalizeTest, RoundTripsToAnEqualRequest) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    ExprPool pool;
    Result<Request> first = Parse(c.text, pool);
    ASSERT_TRUE(first.has_value());
    const std::string text = Normalize(*first, pool);
    Result<Request> second = Parse(text, pool);
    ASSERT_TRUE(second.has_value()) << text << ": " << second.error().message();
    EXPECT_EQ(*second, *first);  // same pool: equal select ids too
    EXPECT_EQ(Normalize(*second, pool), text);

    ExprPool fresh;
    Result<Request> third = Parse(text, fresh);
    ASSERT_TRUE(third.has_value());
    EXPECT_EQ(third->fingerprint, first->fingerprint);
  }
}

TEST(ResreqNormalizeTest, RoundTripsNumbersExactly) {
  const std::vector<std::string_view> numbers = {"0.1",
                                                 "0.3",
                                                 "1.7976931348623157",
                                                 "179769313486231570000000000000000000000",
                                                 "0.5",
                                                 "4000",
                                                 "123.456",
                                                 "0.0000001",
                                                 "9007199254740993"};
  for (std::string_view number : numbers) {
    SCOPED_TRACE(number);
    ExprPool pool;
    Result<Request> first =
        Parse("select[x>" + std::string(number) + "] rusage[m=" + std::string(number) + "]", pool);
    ASSERT_TRUE(first.has_value());
    Result<Request> second = Parse(Normalize(*first, pool), pool);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(*second, *first);
  }
}

TEST(ResreqNormalizeTest, StaysWithinTheInputLimitForLongRequests) {
  // Normalizing adds spaces only around `&&` and `||` (and between sections and parts), so a
  // request of at most 3/5 of the limit always reparses.
  std::string text = "select[a";
  while (text.size() + 4 < kMaxInputBytes * 3 / 5) text += "&&a";
  text += "]";
  ExprPool pool;
  Result<Request> first = Parse(text, pool);
  ASSERT_TRUE(first.has_value());
  const std::string normalized = Normalize(*first, pool);
  EXPECT_LE(normalized.size(), kMaxInputBytes);
  Result<Request> second = Parse(normalized, pool);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->fingerprint, first->fingerprint);
}

TEST(ResreqNormalizeTest, ExpressionAlone) {
  ExprPool pool;
  EXPECT_EQ(NormalizeExpr(kNoExpr, pool), "");
  Result<Request> request = Parse("select[ a>1 ]", pool);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(NormalizeExpr(request->alternatives[0].parts[0].select, pool), "a>1");
}

}  // namespace
}  // namespace sluice::core::resreq
