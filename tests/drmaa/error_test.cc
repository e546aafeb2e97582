#include "drmaa/error.h"

#include <gtest/gtest.h>

#include <string>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

TEST(ErrorTest, EveryErrnoHasItsOwnText) {
  const std::string unknown = ErrorText(-1);
  for (int code = DRMAA_ERRNO_SUCCESS; code < DRMAA_NO_ERRNO; ++code) {
    SCOPED_TRACE(code);
    EXPECT_NE(ErrorText(code), unknown);
  }
  EXPECT_EQ(std::string(ErrorText(DRMAA_NO_ERRNO)), unknown);
}

TEST(ErrorTest, EveryCallHasAName) {
  for (int call = 0; call <= static_cast<int>(Call::kTerminate); ++call) {
    EXPECT_NE(ToString(static_cast<Call>(call)), "?");
  }
}

TEST(ErrorTest, MapsRestFailuresByWhatTheCallWas) {
  struct Case {
    std::string_view name;
    Status status;
    Call call;
    int want;
  };
  const Case cases[] = {
      {"unknown job", NotFound("no job 9"), Call::kJob, DRMAA_ERRNO_INVALID_JOB},
      {"refused job", InvalidArgument("bad queue"), Call::kSubmit, DRMAA_ERRNO_DENIED_BY_DRM},
      {"hold of a running job", FailedPrecondition("running"), Call::kHold,
       DRMAA_ERRNO_HOLD_INCONSISTENT_STATE},
      {"release of a pending job", FailedPrecondition("not held"), Call::kRelease,
       DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE},
      {"terminate of an ended job", FailedPrecondition("ended"), Call::kTerminate,
       DRMAA_ERRNO_INVALID_JOB},
      {"bad token", Status(StatusCode::kUnauthenticated, "401"), Call::kJob,
       DRMAA_ERRNO_AUTH_FAILURE},
      {"down at init", Status(StatusCode::kUnavailable, "refused"), Call::kConnect,
       DRMAA_ERRNO_DRMS_INIT_FAILED},
      {"down later", Status(StatusCode::kUnavailable, "refused"), Call::kJob,
       DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE},
      {"quota", Status(StatusCode::kResourceExhausted, "429"), Call::kSubmit,
       DRMAA_ERRNO_TRY_LATER},
      {"server bug", Internal("500"), Call::kJob, DRMAA_ERRNO_INTERNAL_ERROR},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Error error = ErrorFromStatus(c.status, c.call);
    EXPECT_EQ(error.code(), c.want);
    EXPECT_EQ(error.diagnosis(), c.status.message());
  }
}

TEST(ErrorTest, DiagnosisBuffersTruncateAndValueBuffersRefuse) {
  char small[4] = {'x', 'x', 'x', 'x'};
  WriteTruncated("abcdef", small, sizeof small);
  EXPECT_STREQ(small, "abc");
  WriteTruncated("abcdef", nullptr, 10);  // no buffer: nothing written, no crash
  WriteTruncated("abcdef", small, 0);
  EXPECT_STREQ(small, "abc");

  char value[4] = "old";
  EXPECT_EQ(WriteValue("abcd", value, sizeof value, "v").code(), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_STREQ(value, "old");
  EXPECT_TRUE(WriteValue("abc", value, sizeof value, "v").ok());
  EXPECT_STREQ(value, "abc");
  EXPECT_EQ(WriteValue("a", nullptr, 10, "v").code(), DRMAA_ERRNO_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace sluice::drmaa
