// The CLI's side of job arrays (R-UX-3): job references typed by users, the JOBID text of
// elements and arrays, `jobs -A`, and `submit --array` / `-J 'name[...]%N'` in the body.
#include "client/array_format.h"

#include <gtest/gtest.h>

#include "client/submit_request.h"

namespace sluice::client {
namespace {

using nlohmann::json;

TEST(JobRefTest, ParsesIdsElementsRangesAndSlurmElements) {
  struct Case {
    std::string_view text;
    int64_t id;
    std::string index;
    std::string path;
  };
  const Case cases[] = {
      {"12", 12, "", "/v1/jobs/12/cancel"},
      {"12[3]", 12, "3", "/v1/jobs/12/cancel?index=3"},
      {"12[2-7]", 12, "2-7", "/v1/jobs/12/cancel?index=2-7"},
      {"12_3", 12, "3", "/v1/jobs/12/cancel?index=3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    Result<JobRef> ref = ParseJobRef(c.text);
    ASSERT_TRUE(ref) << ref.error().ToString();
    EXPECT_EQ(ref->id, c.id);
    EXPECT_EQ(ref->index, c.index);
    EXPECT_EQ(ref->Path("/cancel"), c.path);
  }
  for (std::string_view bad : {"", "x", "12[", "12[]", "12[a]", "12[3-]", "-1", "12[3]x", "1_"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseJobRef(bad));
  }
}

TEST(ArrayFormatTest, JobIdTextAndTheArraySummary) {
  EXPECT_EQ(JobIdText({{"id", 12}}), "12");
  EXPECT_EQ(JobIdText({{"id", 12}, {"index", 3}}), "12[3]");
  EXPECT_EQ(JobIdText({{"id", 12}, {"array", "1-50%5"}}), "12[1-50%5]");
  const json jobs = json::array({{{"id", 12},
                                  {"name", "sweep"},
                                  {"user", "alice"},
                                  {"queue", "normal"},
                                  {"array", "1-50%5"},
                                  {"elements",
                                   {{"PENDING", 40},
                                    {"HELD", 0},
                                    {"RUNNING", 5},
                                    {"DONE", 3},
                                    {"EXIT", 1},
                                    {"CANCELLED", 1}}}},
                                 {{"id", 13}, {"name", "plain"}}});
  const std::string text = FormatArrays(jobs);
  EXPECT_NE(text.find("NJOBS"), std::string::npos) << text;
  EXPECT_NE(text.find("12     sweep  alice  normal  50     40    0     5    3     1     1"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("plain"), std::string::npos) << text;
  EXPECT_EQ(FormatArrays(json::array()), "No job arrays found\n");
}

TEST(ArraySubmitBodyTest, ArrayFlagAndLsfNameBrackets) {
  SubmitFlags flags;
  flags.command = {"true"};
  flags.array = "1-50%5";
  EXPECT_EQ((*BuildSubmitBody(flags, "/tmp", 0))["array"], "1-50%5");
  flags.array.clear();
  flags.name = "sweep[1-1000:2]%50";
  const json body = *BuildSubmitBody(flags, "/tmp", 0);
  EXPECT_EQ(body["array"], "1-1000:2%50");
  EXPECT_EQ(body["name"], "sweep");
  flags.name = "bad[1-5";
  EXPECT_FALSE(BuildSubmitBody(flags, "/tmp", 0));
  flags.name = "plain";
  EXPECT_FALSE(BuildSubmitBody(flags, "/tmp", 0)->contains("array"));
}

}  // namespace
}  // namespace sluice::client
