// The C functions' handling of bad input without a controller: NULL pointers, short buffers,
// calls outside a session, unknown attributes. Each returns its errno with a diagnosis and
// never crashes. The calls that need a controller are in tests/integration/drmaa_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "drmaa/drmaa.h"

namespace {

class CApiTest : public ::testing::Test {
 protected:
  char diag_[DRMAA_ERROR_STRING_BUFFER] = "";
};

TEST_F(CApiTest, NullArgumentsAreInvalidArgumentsWithADiagnosis) {
  EXPECT_EQ(drmaa_version(nullptr, nullptr, diag_, sizeof diag_), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_NE(std::string(diag_).find("NULL"), std::string::npos) << diag_;
  EXPECT_EQ(drmaa_allocate_job_template(nullptr, diag_, sizeof diag_),
            DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_set_attribute(nullptr, DRMAA_WD, "/", diag_, sizeof diag_),
            DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_delete_job_template(nullptr, diag_, sizeof diag_), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_run_job(nullptr, 0, nullptr, diag_, sizeof diag_), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_run_bulk_jobs(nullptr, nullptr, 1, 2, 1, diag_, sizeof diag_),
            DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_control(nullptr, DRMAA_CONTROL_HOLD, diag_, sizeof diag_),
            DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_synchronize(nullptr, 0, 0, diag_, sizeof diag_), DRMAA_ERRNO_INVALID_ARGUMENT);
  int stat = 0;
  EXPECT_EQ(drmaa_wait(nullptr, nullptr, 0, &stat, 0, nullptr, diag_, sizeof diag_),
            DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_job_ps("1", nullptr, diag_, sizeof diag_), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_wifexited(nullptr, 0, diag_, sizeof diag_), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_get_next_attr_value(nullptr, diag_, sizeof diag_), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_get_num_job_ids(nullptr, nullptr), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_control("1", 99, diag_, sizeof diag_), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_NE(std::string(diag_).find("DRMAA_CONTROL_SUSPEND"), std::string::npos) << diag_;
  drmaa_release_attr_names(nullptr);  // a no-op, as free(NULL)
  // No diagnosis buffer at all: the errno alone.
  EXPECT_EQ(drmaa_version(nullptr, nullptr, nullptr, 0), DRMAA_ERRNO_INVALID_ARGUMENT);
}

TEST_F(CApiTest, CallsOutsideASessionAreNoActiveSession) {
  drmaa_job_template_t* jt = nullptr;
  EXPECT_EQ(drmaa_allocate_job_template(&jt, diag_, sizeof diag_), DRMAA_ERRNO_NO_ACTIVE_SESSION);
  EXPECT_EQ(jt, nullptr);
  EXPECT_EQ(drmaa_exit(diag_, sizeof diag_), DRMAA_ERRNO_NO_ACTIVE_SESSION);
  int ps = 0;
  EXPECT_EQ(drmaa_job_ps("1", &ps, diag_, sizeof diag_), DRMAA_ERRNO_NO_ACTIVE_SESSION);
  EXPECT_EQ(drmaa_control("1", DRMAA_CONTROL_HOLD, diag_, sizeof diag_),
            DRMAA_ERRNO_NO_ACTIVE_SESSION);
}

TEST_F(CApiTest, InitWithoutAContactOrWithAnUnreachableOneFails) {
  unsetenv("SLUICE_SERVER");
  EXPECT_EQ(drmaa_init(nullptr, diag_, sizeof diag_), DRMAA_ERRNO_NO_DEFAULT_CONTACT_STRING_SELECTED);
  EXPECT_EQ(drmaa_init("ftp://x", diag_, sizeof diag_), DRMAA_ERRNO_INVALID_CONTACT_STRING) << diag_;
  // Port 1 on loopback: nothing listens there.
  EXPECT_EQ(drmaa_init("http://127.0.0.1:1", diag_, sizeof diag_), DRMAA_ERRNO_DRMS_INIT_FAILED);
  setenv("SLUICE_SERVER", "http://127.0.0.1:1", 1);
  EXPECT_EQ(drmaa_init(nullptr, diag_, sizeof diag_), DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR);
  char contact[DRMAA_CONTACT_BUFFER];
  EXPECT_EQ(drmaa_get_contact(contact, sizeof contact, diag_, sizeof diag_), DRMAA_ERRNO_SUCCESS);
  EXPECT_STREQ(contact, "http://127.0.0.1:1");
  unsetenv("SLUICE_SERVER");
}

TEST_F(CApiTest, ShortValueBuffersAreRefusedNotTruncated) {
  char text[4] = "old";
  EXPECT_EQ(drmaa_get_DRM_system(text, sizeof text, diag_, sizeof diag_),
            DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_STREQ(text, "old");
  char drm[DRMAA_DRM_SYSTEM_BUFFER];
  EXPECT_EQ(drmaa_get_DRM_system(drm, sizeof drm, diag_, sizeof diag_), DRMAA_ERRNO_SUCCESS);
  EXPECT_STREQ(drm, "Sluice");
  // A short diagnosis buffer truncates: the text ends in a NUL within it.
  char small[8];
  std::memset(small, 'x', sizeof small);
  EXPECT_EQ(drmaa_version(nullptr, nullptr, small, sizeof small), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(std::strlen(small), sizeof small - 1);
}

TEST_F(CApiTest, AttributeNamesListTheSupportedOnes) {
  drmaa_attr_names_t* names = nullptr;
  ASSERT_EQ(drmaa_get_vector_attribute_names(&names, diag_, sizeof diag_), DRMAA_ERRNO_SUCCESS);
  size_t count = 0;
  EXPECT_EQ(drmaa_get_num_attr_names(names, &count), DRMAA_ERRNO_SUCCESS);
  EXPECT_EQ(count, 3u);
  char name[DRMAA_ATTR_BUFFER];
  char tiny[2];
  EXPECT_EQ(drmaa_get_next_attr_name(names, tiny, sizeof tiny), DRMAA_ERRNO_INVALID_ARGUMENT);
  EXPECT_EQ(drmaa_get_next_attr_name(names, name, sizeof name), DRMAA_ERRNO_SUCCESS);
  EXPECT_STREQ(name, DRMAA_V_ARGV);  // the short buffer did not move the iterator
  EXPECT_EQ(drmaa_get_next_attr_name(names, name, sizeof name), DRMAA_ERRNO_SUCCESS);
  EXPECT_EQ(drmaa_get_next_attr_name(names, name, sizeof name), DRMAA_ERRNO_SUCCESS);
  EXPECT_EQ(drmaa_get_next_attr_name(names, name, sizeof name), DRMAA_ERRNO_NO_MORE_ELEMENTS);
  drmaa_release_attr_names(names);
}

TEST_F(CApiTest, StatFunctionsReadAStat) {
  int value = -1;
  // A stat no wait returned: neither exited, signalled nor aborted.
  EXPECT_EQ(drmaa_wifexited(&value, 0, diag_, sizeof diag_), DRMAA_ERRNO_SUCCESS);
  EXPECT_EQ(value, 0);
  char signal[DRMAA_SIGNAL_BUFFER];
  EXPECT_EQ(drmaa_wtermsig(signal, sizeof signal, 0, diag_, sizeof diag_), DRMAA_ERRNO_SUCCESS);
  EXPECT_STREQ(signal, "");
  EXPECT_EQ(drmaa_wifaborted(&value, 0, diag_, sizeof diag_), DRMAA_ERRNO_SUCCESS);
  EXPECT_EQ(value, 0);
}

TEST_F(CApiTest, StrerrorKnowsEveryErrnoAndSaysSoForOthers) {
  EXPECT_STRNE(drmaa_strerror(DRMAA_ERRNO_INVALID_JOB), drmaa_strerror(12345));
  EXPECT_STREQ(drmaa_strerror(-7), drmaa_strerror(12345));
}

}  // namespace
