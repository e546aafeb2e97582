// Validate: names checked against the cluster's resources at submission (R-RR-5).
#include "core/resreq/validate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/resreq/parser.h"

namespace sluice::core::resreq {
namespace {

ResourceCatalog Catalog() {
  return ResourceCatalog{.host_resources = {"mem", "gpu"}, .shared_resources = {"lic"}};
}

Status ValidateText(std::string_view text, const ResourceCatalog& catalog = Catalog()) {
  ExprPool pool;
  Result<Request> request = Parse(text, pool);
  EXPECT_TRUE(request.has_value()) << text << ": " << request.error().message();
  if (!request.has_value()) return request.error();
  return Validate(*request, pool, catalog);
}

TEST(ResreqValidateTest, AcceptsKnownResources) {
  const std::string_view texts[] = {
      "",
      "select[type==linux && mem>4000 && maxgpu>=2 && fast] order[-slots,mem] rusage[mem=10]",
      "rusage[lic=1:gpu=1]",
      "2*{rusage[lic=2]} + 1*{rusage[lic=1] same[model]}",
      "{select[undefined_attribute==x]} || {span[ptile=4]}",
  };
  for (std::string_view text : texts) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(ValidateText(text).ok()) << ValidateText(text).message();
  }
}

TEST(ResreqValidateTest, RejectsMeaninglessRequests) {
  struct Case {
    std::string_view name;
    std::string_view text;
  };
  const Case cases[] = {
      {"unknown rusage resource", "rusage[gpus=1]"},
      {"slots in rusage", "rusage[slots=2]"},
      {"shared resource in select", "select[lic>0]"},
      {"shared total in select", "select[maxlic>=1]"},
      {"shared resource as a tag", "select[lic]"},
      {"shared resource in defined", "select[defined(lic)]"},
      {"shared resource in order", "order[-lic]"},
      {"shared resource in same", "same[lic]"},
      {"second part", "1*{rusage[mem=1]} + 1*{rusage[memory=1]}"},
      {"second alternative", "{rusage[mem=1]} || {select[lic>1]}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Status status = ValidateText(c.text);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  }
}

TEST(ResreqValidateTest, RejectsAResourceThatIsBothHostAndShared) {
  ResourceCatalog catalog = Catalog();
  catalog.shared_resources.insert("mem");
  EXPECT_EQ(ValidateText("rusage[mem=1]", catalog).code(), StatusCode::kInvalidArgument);
}

TEST(ResreqValidateTest, RechecksWhatHandBuiltRequestsCanBreak) {
  struct Case {
    std::string_view name;
    Primary part;
    size_t parts;
  };
  const Case cases[] = {
      {"zero ptile", Primary{.span = {.kind = SpanKind::kPtile, .ptile = 0}}, 1},
      {"negative amount", Primary{.rusage = {{"mem", -1}}}, 1},
      {"unsorted rusage", Primary{.rusage = {{"mem", 1}, {"gpu", 1}}}, 1},
      {"duplicate rusage", Primary{.rusage = {{"mem", 1}, {"mem", 2}}}, 1},
      {"negative count", Primary{.count = -1}, 1},
      {"zero count in a compound", Primary{.count = 0}, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Request request;
    request.alternatives.push_back(Compound{.parts = std::vector<Primary>(c.parts, c.part)});
    ExprPool pool;
    UpdateFingerprints(request, pool);
    EXPECT_EQ(Validate(request, pool, Catalog()).code(), StatusCode::kInvalidArgument);
  }
}

TEST(ResreqValidateTest, RejectsEmptyShapes) {
  ExprPool pool;
  EXPECT_EQ(Validate(Request{}, pool, Catalog()).code(), StatusCode::kInvalidArgument);
  Request no_parts;
  no_parts.alternatives.push_back(Compound{});
  EXPECT_EQ(Validate(no_parts, pool, Catalog()).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Validate(UnconstrainedRequest(), pool, Catalog()).ok());
}

}  // namespace
}  // namespace sluice::core::resreq
