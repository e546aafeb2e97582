#include "drmaa/attributes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

constexpr int64_t kNow = 1764450000;

TEST(AttributesTest, ListsEveryMandatoryScalarAndTheWallClockLimit) {
  const std::vector<std::string> names = SupportedAttributeNames(false);
  for (const char* name :
       {DRMAA_REMOTE_COMMAND, DRMAA_JS_STATE, DRMAA_WD, DRMAA_JOB_CATEGORY,
        DRMAA_NATIVE_SPECIFICATION, DRMAA_BLOCK_EMAIL, DRMAA_START_TIME, DRMAA_JOB_NAME,
        DRMAA_INPUT_PATH, DRMAA_OUTPUT_PATH, DRMAA_ERROR_PATH, DRMAA_JOIN_FILES,
        DRMAA_WCT_HLIMIT}) {
    SCOPED_TRACE(name);
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end());
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), DRMAA_TRANSFER_FILES), names.end());
  EXPECT_EQ(SupportedAttributeNames(true),
            (std::vector<std::string>{DRMAA_V_ARGV, DRMAA_V_ENV, DRMAA_V_EMAIL}));
}

TEST(AttributesTest, ChecksEachScalarValue) {
  struct Case {
    std::string_view name;
    std::string_view attribute;
    std::string_view value;
    int want;
  };
  const Case cases[] = {
      {"any command", DRMAA_REMOTE_COMMAND, "/bin/true", DRMAA_ERRNO_SUCCESS},
      {"active", DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_ACTIVE, DRMAA_ERRNO_SUCCESS},
      {"hold", DRMAA_JS_STATE, DRMAA_SUBMISSION_STATE_HOLD, DRMAA_ERRNO_SUCCESS},
      {"other state", DRMAA_JS_STATE, "drmaa_suspended", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE},
      {"join y", DRMAA_JOIN_FILES, "y", DRMAA_ERRNO_SUCCESS},
      {"join yes", DRMAA_JOIN_FILES, "yes", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT},
      {"block email 1", DRMAA_BLOCK_EMAIL, "1", DRMAA_ERRNO_SUCCESS},
      {"block email true", DRMAA_BLOCK_EMAIL, "true", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT},
      {"start time", DRMAA_START_TIME, "12:30", DRMAA_ERRNO_SUCCESS},
      {"start time garbage", DRMAA_START_TIME, "noon", DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT},
      {"limit", DRMAA_WCT_HLIMIT, "1:00:00", DRMAA_ERRNO_SUCCESS},
      {"limit zero", DRMAA_WCT_HLIMIT, "0", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE},
      {"output", DRMAA_OUTPUT_PATH, ":/tmp/o.$drmaa_incr_ph$", DRMAA_ERRNO_SUCCESS},
      {"output on a host", DRMAA_OUTPUT_PATH, "h1:/tmp/o", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE},
      {"input /dev/null", DRMAA_INPUT_PATH, ":/dev/null", DRMAA_ERRNO_SUCCESS},
      {"input a file", DRMAA_INPUT_PATH, "/etc/hosts", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE},
      {"wd naming itself", DRMAA_WD, "$drmaa_wd_ph$/x", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE},
      {"wd in home", DRMAA_WD, "$drmaa_hd_ph$/x", DRMAA_ERRNO_SUCCESS},
      {"native", DRMAA_NATIVE_SPECIFICATION, "-n 2 -q short", DRMAA_ERRNO_SUCCESS},
      {"native bad", DRMAA_NATIVE_SPECIFICATION, "-n x", DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE},
      {"unsupported", DRMAA_DEADLINE_TIME, "12:00", DRMAA_ERRNO_INVALID_ARGUMENT},
      {"unsupported unset", DRMAA_DEADLINE_TIME, "", DRMAA_ERRNO_SUCCESS},
      {"unknown name", "drmaa_colour", "red", DRMAA_ERRNO_INVALID_ARGUMENT},
      {"vector as scalar", DRMAA_V_ARGV, "a", DRMAA_ERRNO_INVALID_ARGUMENT},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Error error = CheckScalar(c.attribute, c.value, kNow);
    EXPECT_EQ(error.code(), c.want) << error.diagnosis();
    EXPECT_EQ(error.diagnosis().empty(), c.want == DRMAA_ERRNO_SUCCESS);
  }
}

TEST(AttributesTest, ChecksEachVectorValue) {
  EXPECT_TRUE(CheckVector(DRMAA_V_ARGV, {"-c", "exit 3"}).ok());
  EXPECT_TRUE(CheckVector(DRMAA_V_ENV, {"A=1", "B="}).ok());
  EXPECT_EQ(CheckVector(DRMAA_V_ENV, {"A"}).code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT);
  EXPECT_EQ(CheckVector(DRMAA_V_ENV, {"=1"}).code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT);
  EXPECT_TRUE(CheckVector(DRMAA_V_EMAIL, {}).ok());
  EXPECT_EQ(CheckVector(DRMAA_V_EMAIL, {"a@b"}).code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE);
  EXPECT_EQ(CheckVector(DRMAA_WD, {"x"}).code(), DRMAA_ERRNO_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace sluice::drmaa
