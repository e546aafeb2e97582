#include "drmaa/job_template.h"

#include <gtest/gtest.h>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

constexpr int64_t kNow = 1764450000;

TEST(JobTemplateTest, StoresCheckedValuesAndEmptyUnsets) {
  JobTemplate jt;
  ASSERT_TRUE(jt.Set(DRMAA_JOB_NAME, "sim", kNow).ok());
  EXPECT_EQ(*jt.Get(DRMAA_JOB_NAME), "sim");
  ASSERT_TRUE(jt.Set(DRMAA_JOB_NAME, "", kNow).ok());
  EXPECT_EQ(*jt.Get(DRMAA_JOB_NAME), "");
  EXPECT_FALSE(jt.Values().scalars.contains(DRMAA_JOB_NAME));
}

TEST(JobTemplateTest, ARefusedValueLeavesThePreviousOne) {
  JobTemplate jt;
  ASSERT_TRUE(jt.Set(DRMAA_JOIN_FILES, "y", kNow).ok());
  EXPECT_EQ(jt.Set(DRMAA_JOIN_FILES, "maybe", kNow).code(), DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT);
  EXPECT_EQ(*jt.Get(DRMAA_JOIN_FILES), "y");
}

TEST(JobTemplateTest, VectorsAndTheirKindAreKept) {
  JobTemplate jt;
  ASSERT_TRUE(jt.SetVector(DRMAA_V_ARGV, {"-c", "exit 3"}).ok());
  EXPECT_EQ(*jt.GetVector(DRMAA_V_ARGV), (std::vector<std::string>{"-c", "exit 3"}));
  ASSERT_TRUE(jt.SetVector(DRMAA_V_ARGV, {}).ok());
  EXPECT_TRUE(jt.GetVector(DRMAA_V_ARGV)->empty());
  EXPECT_EQ(jt.Get(DRMAA_V_ARGV).error().code(), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(jt.GetVector(DRMAA_WD).error().code(), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(jt.Get("drmaa_nope").error().code(), DRMAA_ERRNO_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace sluice::drmaa
