#include "drmaa/submission.h"

#include <gtest/gtest.h>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1764450000;

SubmitContext Context() {
  return SubmitContext{.submit_dir = "/sub",
                       .home = "/home/a",
                       .now = kNow,
                       .is_directory = [](const std::string& path) { return path == "/logs"; }};
}

TemplateValues Command(std::string command = "/bin/sh") {
  TemplateValues values;
  values.scalars[DRMAA_REMOTE_COMMAND] = std::move(command);
  return values;
}

TEST(SubmissionTest, CommandIsAnArgvNeverAShellLine) {
  TemplateValues values = Command();
  values.vectors[DRMAA_V_ARGV] = {"-c", "exit 3"};
  Expected<json> body = BuildSubmission(values, Context(), std::nullopt);
  ASSERT_TRUE(body) << body.error().diagnosis();
  EXPECT_EQ((*body)["command"], json::array({"/bin/sh", "-c", "exit 3"}));
  EXPECT_EQ((*body)["cwd"], "/sub");
  EXPECT_FALSE(body->contains("array"));
  // A lone command with spaces in it is still one program, not a shell line.
  EXPECT_EQ((*BuildSubmission(Command("/bin/my prog"), Context(), std::nullopt))["command"],
            json::array({"/bin/my prog"}));
}

TEST(SubmissionTest, NoCommandIsRefused) {
  EXPECT_EQ(BuildSubmission(TemplateValues{}, Context(), std::nullopt).error().code(),
            DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
}

TEST(SubmissionTest, AttributesBecomeTheirFields) {
  TemplateValues values = Command();
  values.scalars[DRMAA_JOB_NAME] = "sim[x]";
  values.scalars[DRMAA_JOB_CATEGORY] = "short";
  values.scalars[DRMAA_WCT_HLIMIT] = "1:00";
  values.scalars[DRMAA_JS_STATE] = DRMAA_SUBMISSION_STATE_HOLD;
  values.scalars[DRMAA_WD] = "$drmaa_hd_ph$/run";
  values.scalars[DRMAA_OUTPUT_PATH] = ":$drmaa_wd_ph$/out.txt";
  values.scalars[DRMAA_ERROR_PATH] = "err.txt";
  values.scalars[DRMAA_START_TIME] = "2026/12/05 10:00 +00:00";
  values.scalars[DRMAA_NATIVE_SPECIFICATION] = "-n 2 -R \"mem=100\"";
  values.vectors[DRMAA_V_ENV] = {"A=1", "B=x=y"};
  Expected<json> body = BuildSubmission(values, Context(), std::nullopt);
  ASSERT_TRUE(body) << body.error().diagnosis();
  EXPECT_EQ((*body)["name"], "sim[x]");  // brackets are not an array here
  EXPECT_FALSE(body->contains("array"));
  EXPECT_EQ((*body)["queue"], "short");
  EXPECT_EQ((*body)["run_limit"], 60);
  EXPECT_EQ((*body)["hold"], true);
  EXPECT_EQ((*body)["cwd"], "/home/a/run");
  EXPECT_EQ((*body)["output"], "/home/a/run/out.txt");
  EXPECT_EQ((*body)["error"], "/home/a/run/err.txt");
  EXPECT_EQ((*body)["begin"], 1796464800);
  EXPECT_EQ((*body)["tasks"], 2);
  EXPECT_EQ((*body)["resreq"], "mem=100");
  EXPECT_EQ((*body)["env"], (json{{"A", "1"}, {"B", "x=y"}}));
}

TEST(SubmissionTest, JoinFilesSendsNoErrorFile) {
  TemplateValues values = Command();
  values.scalars[DRMAA_OUTPUT_PATH] = "/o";
  values.scalars[DRMAA_ERROR_PATH] = "/e";
  values.scalars[DRMAA_JOIN_FILES] = "y";
  Expected<json> body = BuildSubmission(values, Context(), std::nullopt);
  ASSERT_TRUE(body) << body.error().diagnosis();
  EXPECT_EQ((*body)["output"], "/o");
  EXPECT_FALSE(body->contains("error"));
}

TEST(SubmissionTest, ADirectoryGetsAFilePerJob) {
  TemplateValues values = Command();
  values.scalars[DRMAA_JOB_NAME] = "a/b";
  values.scalars[DRMAA_OUTPUT_PATH] = ":/logs";
  Expected<json> body = BuildSubmission(values, Context(), std::nullopt);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)["output"], "/logs/a_b.o%j");
  Expected<json> bulk = BuildSubmission(values, Context(), BulkRange{.start = 1, .end = 2});
  ASSERT_TRUE(bulk);
  EXPECT_EQ((*bulk)["output"], "/logs/a_b.o%j.%a");
}

TEST(SubmissionTest, BulkJobsAreOneArrayWithTheIndexInPaths) {
  TemplateValues values = Command();
  values.scalars[DRMAA_OUTPUT_PATH] = ":/tmp/o.$drmaa_incr_ph$";
  Expected<json> body =
      BuildSubmission(values, Context(), BulkRange{.start = 2, .end = 10, .incr = 3});
  ASSERT_TRUE(body) << body.error().diagnosis();
  EXPECT_EQ((*body)["array"], "2-10:3");
  EXPECT_EQ((*body)["output"], "/tmp/o.%a");
  EXPECT_EQ(BulkJobIds(7, BulkRange{.start = 2, .end = 10, .incr = 3}),
            (std::vector<std::string>{"7[2]", "7[5]", "7[8]"}));
  EXPECT_EQ((*BuildSubmission(values, Context(), BulkRange{.start = 1, .end = 5}))["array"],
            "1-5");
  // The index placeholder names nothing in a single job.
  EXPECT_EQ(BuildSubmission(values, Context(), std::nullopt).error().code(),
            DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
}

TEST(SubmissionTest, ChecksBulkRanges) {
  EXPECT_TRUE(CheckBulkRange({.start = 1, .end = 1, .incr = 1}).ok());
  for (BulkRange bad : {BulkRange{0, 5, 1}, BulkRange{5, 4, 1}, BulkRange{1, 5, 0}}) {
    EXPECT_EQ(CheckBulkRange(bad).code(), DRMAA_ERRNO_INVALID_ARGUMENT);
  }
}

TEST(SubmissionTest, AnAttributeAndAFlagSettingOneThingConflict) {
  struct Case {
    std::string_view attribute;
    std::string_view value;
    std::string_view native;
  };
  const Case cases[] = {
      {DRMAA_JOB_CATEGORY, "short", "-q long"},
      {DRMAA_WCT_HLIMIT, "60", "-W 5m"},
      {DRMAA_START_TIME, "10:00", "-b +1h"},
      {DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_ACTIVE, "-H"},
      {DRMAA_JOB_NAME, "a", "-J b"},
      {DRMAA_WD, "/w", "--cwd /v"},
      {DRMAA_OUTPUT_PATH, "/o", "-o /p"},
      {DRMAA_ERROR_PATH, "/e", "-e /f"},
      {DRMAA_JOIN_FILES, "y", "-e /f"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.attribute);
    TemplateValues values = Command();
    values.scalars[std::string(c.attribute)] = std::string(c.value);
    values.scalars[DRMAA_NATIVE_SPECIFICATION] = std::string(c.native);
    Expected<json> body = BuildSubmission(values, Context(), std::nullopt);
    ASSERT_FALSE(body);
    EXPECT_EQ(body.error().code(), DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES);
  }
}

TEST(SubmissionTest, ValuesThatAreNotUtf8AreRefused) {
  TemplateValues values = Command();
  values.vectors[DRMAA_V_ARGV] = {"\xff\xfe"};
  EXPECT_EQ(BuildSubmission(values, Context(), std::nullopt).error().code(),
            DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
}

TEST(SubmissionTest, NativeFlagsAloneAreTaken) {
  TemplateValues values = Command();
  values.scalars[DRMAA_NATIVE_SPECIFICATION] = "-q long -o /p -H";
  Expected<json> body = BuildSubmission(values, Context(), std::nullopt);
  ASSERT_TRUE(body) << body.error().diagnosis();
  EXPECT_EQ((*body)["queue"], "long");
  EXPECT_EQ((*body)["output"], "/p");
  EXPECT_EQ((*body)["hold"], true);
}

}  // namespace
}  // namespace sluice::drmaa
