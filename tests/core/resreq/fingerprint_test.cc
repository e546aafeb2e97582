// Fingerprints (R-RR-4): stable across runs, pools and platforms; equal requests agree; any
// field change differs.
#include "core/resreq/fingerprint.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/resreq/parser.h"
#include "core/resreq/request.h"

namespace sluice::core::resreq {
namespace {

constexpr std::string_view kBase =
    "2*{select[type==linux && mem>4000] order[-slots] rusage[mem=100] span[ptile=2] "
    "same[model]} + 1*{}";

uint64_t FingerprintOf(std::string_view text) {
  ExprPool pool;
  Result<Request> request = Parse(text, pool);
  EXPECT_TRUE(request.has_value()) << text << ": " << request.error().message();
  return request.has_value() ? request->fingerprint : 0;
}

TEST(ResreqFingerprintTest, GoldenValuesArePinned) {
  // Computed once and pinned: a change here changes every stored or cached fingerprint, so it
  // must be deliberate (and the golden values updated in the same commit).
  EXPECT_EQ(Fingerprinter().Finish(), 0xf52a15e9a9b5e89bULL);
  EXPECT_EQ(Fingerprinter().Text("sluice").U64(42).Double(0.5).Finish(), 0x3a732c40bde464b2ULL);
  EXPECT_EQ(FingerprintOf(""), 0xe24bf746f0f294c6ULL);
  EXPECT_EQ(FingerprintOf(kBase), 0x8de641c8e912f56aULL);
}

TEST(ResreqFingerprintTest, EqualRequestsAgree) {
  struct Case {
    std::string_view name;
    std::string_view lhs;
    std::string_view rhs;
  };
  const Case cases[] = {
      {"spacing", "select[a&&b]", " select [ a && b ] "},
      {"section order", "select[a] rusage[mem=1]", "rusage[mem=1] select[a]"},
      {"rusage order", "rusage[a=1:b=2]", "rusage[b=2,a=1]"},
      {"plus sign", "order[mem]", "order[+mem]"},
      {"number spelling", "select[mem>4000] rusage[mem=0.5]",
       "select[mem>4000.0] rusage[mem=0.50]"},
      {"quotes", "select[t==\"x\"]", "select[t=='x']"},
      {"braces", "select[a]", "{select[a]}"},
      {"parentheses", "select[(a) && ((b))]", "select[a && b]"},
      {"empty", "", "  "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(FingerprintOf(c.lhs), FingerprintOf(c.rhs));
  }
}

TEST(ResreqFingerprintTest, AnyFieldChangeDiffers) {
  // Each edit replaces the first occurrence of `from` in kBase by `to`.
  struct Edit {
    std::string_view from;
    std::string_view to;
  };
  const Edit edits[] = {
      {"", ""},  // kBase itself
      {"2*{", "3*{"},
      {"mem>4000", "mem>4001"},
      {" && mem>4000", ""},
      {"order[-slots]", "order[slots]"},
      {"order[-slots]", "order[-mem]"},
      {"order[-slots]", "order[-slots,mem]"},
      {"mem=100", "mem=101"},
      {"mem=100", "gpu=100"},
      {"mem=100", "gpu=1:mem=100"},
      {"ptile=2", "ptile=3"},
      {"span[ptile=2]", "span[hosts=1]"},
      {"span[ptile=2] ", ""},
      {"same[model]", "same[arch]"},
      {" same[model]", ""},
      {"1*{}", "2*{}"},
      {" + 1*{}", ""},
      {" + 1*{}", " + 1*{} || {}"},
      {" + 1*{}", " + 1*{select[a]}"},
  };
  std::vector<uint64_t> seen;
  for (const Edit& edit : edits) {
    std::string text(kBase);
    const size_t at = text.find(edit.from);
    ASSERT_NE(at, std::string::npos) << edit.from;
    text.replace(at, edit.from.size(), edit.to);
    SCOPED_TRACE(text);
    const uint64_t fingerprint = FingerprintOf(text);
    for (uint64_t other : seen) EXPECT_NE(fingerprint, other);
    seen.push_back(fingerprint);
  }
  EXPECT_NE(FingerprintOf("1*{} + 2*{}"), FingerprintOf("2*{} + 1*{}"));  // part order
}

TEST(ResreqFingerprintTest, IndependentOfThePoolsHistory) {
  ExprPool busy;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(Parse("select[x" + std::to_string(i) + " > " + std::to_string(i) + "]", busy));
  }
  Result<Request> request = Parse(kBase, busy);
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->fingerprint, FingerprintOf(kBase));
}

TEST(ResreqFingerprintTest, UpdateFingerprintsRecomputesAfterAnEdit) {
  ExprPool pool;
  Result<Request> parsed = Parse("rusage[mem=1]", pool);
  ASSERT_TRUE(parsed.has_value());
  Request request = *parsed;
  request.alternatives[0].parts[0].rusage[0].amount = 2;
  UpdateFingerprints(request, pool);
  EXPECT_EQ(request.fingerprint, FingerprintOf("rusage[mem=2]"));
  EXPECT_EQ(request.alternatives[0].parts[0].fingerprint,
            PrimaryFingerprint(request.alternatives[0].parts[0], pool));
}

TEST(ResreqFingerprintTest, NegativeZeroHashesAsZero) {
  EXPECT_EQ(Fingerprinter().Double(-0.0).Finish(), Fingerprinter().Double(0.0).Finish());
  EXPECT_NE(Fingerprinter().Text("ab").Text("c").Finish(),
            Fingerprinter().Text("a").Text("bc").Finish());
}

}  // namespace
}  // namespace sluice::core::resreq
