// The core's job record stays within mimalloc's 384-byte size class (issue 45: a million
// pending jobs). A Job lives in a node of the job table beside its key and the node's next
// pointer; one byte more than 368 in the Job takes every job to the 448-byte class, +64 MB
// at a million. The member order note in core/model/job.h says how it fits.
#include <gtest/gtest.h>

#include "core/model/job.h"

namespace sluice::core {
namespace {

TEST(JobLayoutTest, AJobAndItsTableNodeFit384Bytes) {
  if (sizeof(void*) != 8) GTEST_SKIP() << "the sizes below are those of a 64-bit build";
  EXPECT_LE(sizeof(Job), 368u);
  EXPECT_LE(sizeof(void*) + sizeof(JobId) + sizeof(Job), 384u);
  EXPECT_LE(sizeof(AdmissionRecord), 48u);
}

}  // namespace
}  // namespace sluice::core
