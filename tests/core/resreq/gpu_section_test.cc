// The gpu[] section (R-GPU-2): its keys as LSF's -gpu writes them, the canonical text, the
// fingerprint, errors with their columns, and the checks at submission.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/resreq/parser.h"
#include "core/resreq/request.h"
#include "core/resreq/validate.h"

namespace sluice::core::resreq {
namespace {

GpuRequest GpuOf(std::string_view text) {
  ExprPool pool;
  Result<Request> request = Parse(text, pool);
  EXPECT_TRUE(request.has_value()) << text << ": " << request.error().message();
  if (!request.has_value()) return GpuRequest{};
  return request->alternatives[0].parts[0].gpu;
}

TEST(ResreqGpuSectionTest, KeysFillTheRequest) {
  struct Case {
    std::string_view text;
    GpuRequest want;
  };
  const Case cases[] = {
      {"gpu[]", {.num = 1}},
      {"gpu[num=2]", {.num = 2}},
      {"gpu[num=2/host]", {.num = 2}},
      {"gpu[num=1/task]", {.num = 1, .per = GpuPer::kTask}},
      {"gpu[num=2:mode=shared]", {.num = 2, .shared = true}},
      {"gpu[num=2:mode=exclusive_process]", {.num = 2}},
      // j_exclusive=yes keeps shared-mode devices to the job: nobody else may share them.
      {"gpu[mode=shared:j_exclusive=yes]", {.num = 1}},
      {"gpu[mode=shared:j_exclusive=no]", {.num = 1, .shared = true}},
      {"gpu[gmodel=A100:gmem=40G]", {.num = 1, .mem_mb = 40960, .model = "A100"}},
      {"gpu[gmodel='Tesla-V100':gmem=512]", {.num = 1, .mem_mb = 512, .model = "Tesla-V100"}},
      {"gpu[num=4:glink=yes:aff=yes]", {.num = 4, .link = true, .affinity = true}},
      {"gpu[aff=no:glink=no:num=3]", {.num = 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(GpuOf(c.text), c.want);
  }
}

TEST(ResreqGpuSectionTest, WorksInsideCompoundsAndAlternatives) {
  ExprPool pool;
  Result<Request> request =
      Parse("{1*{gpu[num=4:glink=yes]} + 8*{select[type==x86]}} || {gpu[num=2]}", pool);
  ASSERT_TRUE(request.has_value()) << request.error().message();
  EXPECT_EQ(request->alternatives[0].parts[0].gpu.num, 4);
  EXPECT_TRUE(request->alternatives[0].parts[0].gpu.link);
  EXPECT_EQ(request->alternatives[0].parts[1].gpu.num, 0);
  EXPECT_EQ(request->alternatives[1].parts[0].gpu.num, 2);
}

TEST(ResreqGpuSectionTest, CanonicalTextRoundTrips) {
  struct Case {
    std::string_view text;
    std::string_view canonical;
  };
  const Case cases[] = {
      {"gpu[]", "gpu[num=1]"},
      {"gpu[ aff=yes : num=2/host : glink=yes ]", "gpu[num=2:glink=yes:aff=yes]"},
      {"gpu[num=1/task:mode=shared:gmem=1G]", "gpu[num=1/task:mode=shared:gmem=1024]"},
      {"gpu[gmodel=\"H100-SXM\"]", "gpu[num=1:gmodel=\"H100-SXM\"]"},
      {"rusage[mem=10] gpu[gmodel=A100]", "rusage[mem=10] gpu[num=1:gmodel=A100]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ExprPool pool;
    Result<Request> request = Parse(c.text, pool);
    ASSERT_TRUE(request.has_value()) << request.error().message();
    const std::string canonical = Normalize(*request, pool);
    EXPECT_EQ(canonical, c.canonical);
    Result<Request> again = Parse(canonical, pool);
    ASSERT_TRUE(again.has_value()) << again.error().message();
    EXPECT_EQ(*again, *request);
    EXPECT_EQ(again->fingerprint, request->fingerprint);
  }
}

TEST(ResreqGpuSectionTest, EveryFieldChangesTheFingerprint) {
  const std::string_view texts[] = {
      "",
      "gpu[num=1]",
      "gpu[num=2]",
      "gpu[num=2/task]",
      "gpu[num=2:mode=shared]",
      "gpu[num=2:gmem=10]",
      "gpu[num=2:gmodel=A100]",
      "gpu[num=2:glink=yes]",
      "gpu[num=2:aff=yes]",
  };
  std::vector<uint64_t> seen;
  for (std::string_view text : texts) {
    ExprPool pool;
    Result<Request> request = Parse(text, pool);
    ASSERT_TRUE(request.has_value()) << request.error().message();
    for (uint64_t other : seen) EXPECT_NE(request->fingerprint, other) << text;
    seen.push_back(request->fingerprint);
  }
}

TEST(ResreqGpuSectionTest, ErrorsPointAtTheBadKeyOrValue) {
  struct Case {
    std::string_view text;
    int32_t column;
    std::string_view says;
  };
  const Case cases[] = {
      {"gpu[num=0]", 9, ">= 1"},
      {"gpu[num=65]", 9, "<= 64"},
      {"gpu[num=1.5]", 9, "whole number"},
      {"gpu[num=2/node]", 11, "'host' or 'task'"},
      {"gpu[mode=exclusive]", 10, "'shared' or 'exclusive_process'"},
      {"gpu[glink=true]", 11, "'yes' or 'no'"},
      {"gpu[gmem=0]", 10, "device memory > 0"},
      {"gpu[gmodel=]", 12, "GPU model"},
      {"gpu[ngpus=2]", 5, "a gpu[] key"},
      {"gpu[mps=yes]", 5, "MPS is not supported"},
      {"gpu[num=1:num=2]", 11, "at most once"},
      {"gpu[num=1 aff=yes]", 11, "':' or ']'"},
      {"gpu[num=1] gpu[num=2]", 12, "second 'gpu' section"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    ExprPool pool;
    ParseError error;
    Result<Request> result = Parse(c.text, pool, &error);
    ASSERT_FALSE(result.has_value());
    EXPECT_EQ(error.column, c.column) << error.message;
    EXPECT_NE(error.message.find(c.says), std::string::npos) << error.message;
  }
}

TEST(ResreqGpuSectionTest, ValidateRefusesGpusTwiceAndGpusWhereThereAreNone) {
  const ResourceCatalog with_gpus{.host_resources = {"mem", "gpu"}};
  const ResourceCatalog without{.host_resources = {"mem"}};
  auto validate = [](std::string_view text, const ResourceCatalog& catalog) {
    ExprPool pool;
    Result<Request> request = Parse(text, pool);
    EXPECT_TRUE(request.has_value()) << request.error().message();
    return Validate(*request, pool, catalog);
  };
  EXPECT_TRUE(validate("gpu[num=2] rusage[mem=10]", with_gpus).ok());
  const Status twice = validate("gpu[num=2] rusage[gpu=2]", with_gpus);
  EXPECT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("both ask for GPUs"), std::string::npos) << twice.message();
  // Shared mode is by device memory: it needs gmem, and one part (two parts on one host
  // would reserve a device's memory twice in one grant).
  const Status shared = validate("gpu[num=1:mode=shared]", with_gpus);
  EXPECT_FALSE(shared.ok());
  EXPECT_NE(shared.message().find("mode=shared needs gmem="), std::string::npos)
      << shared.message();
  EXPECT_TRUE(validate("gpu[num=1:mode=shared:gmem=4G]", with_gpus).ok());
  EXPECT_TRUE(validate("gpu[num=1:mode=shared:j_exclusive=yes]", with_gpus).ok());
  EXPECT_TRUE(validate("{gpu[mode=shared:gmem=1G]} || {gpu[num=1]}", with_gpus).ok());
  const Status compound = validate("1*{gpu[mode=shared:gmem=1G]} + 1*{gpu[num=1]}", with_gpus);
  EXPECT_FALSE(compound.ok());
  EXPECT_NE(compound.message().find("part 1: gpu: mode=shared is not supported in a compound"),
            std::string::npos)
      << compound.message();
  const Status none = validate("2*{gpu[num=1]} + 1*{rusage[mem=1]}", without);
  EXPECT_FALSE(none.ok());
  EXPECT_NE(none.message().find("part 1: gpu: no host of the cluster has GPUs"), std::string::npos)
      << none.message();
}

}  // namespace
}  // namespace sluice::core::resreq
