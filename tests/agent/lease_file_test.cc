// The agent's lease file (issue 43): the deadline round-trips to the millisecond, anything
// else reads as no lease, and Renew writes only when the deadline moved back or on by a step.
#include "agent/lease_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/subprocess.h"

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;
using sluice::testing::TempDir;

int64_t Ms(LeaseClock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

TEST(LeaseFileTest, TheDeadlineRoundTripsToTheMillisecond) {
  TempDir dir;
  const std::string path = (dir.path() / "lease").string();
  EXPECT_FALSE(ReadLeaseDeadline(path));
  const LeaseClock::time_point deadline = LeaseClock::now() + 5s;
  ASSERT_TRUE(WriteLeaseDeadline(path, deadline).ok());
  const std::optional<LeaseClock::time_point> read = ReadLeaseDeadline(path);
  ASSERT_TRUE(read);
  EXPECT_EQ(Ms(*read - deadline), 0);
}

TEST(LeaseFileTest, AnythingButADecimalNumberIsNoLease) {
  TempDir dir;
  const std::string path = (dir.path() / "lease").string();
  for (const char* text : {"", "\n", "12a\n", "-5\n", "99999999999999999999\n"}) {
    SCOPED_TRACE(text);
    std::ofstream(path) << text;
    EXPECT_FALSE(ReadLeaseDeadline(path));
  }
  EXPECT_EQ(
      WriteLeaseDeadline((dir.path() / "missing" / "lease").string(), LeaseClock::now()).code(),
      StatusCode::kInternal);
}

TEST(LeaseFileTest, RenewWritesWhenTheDeadlineMovesBackOrOnByAStep) {
  TempDir dir;
  const std::string path = (dir.path() / "lease").string();
  LeaseFile lease(path);
  // Whole milliseconds, as the file holds them.
  const LeaseClock::time_point t =
      std::chrono::time_point_cast<std::chrono::milliseconds>(LeaseClock::now() + 10s);
  ASSERT_TRUE(lease.Renew(t).ok());
  EXPECT_EQ(Ms(*ReadLeaseDeadline(path) - t), 0);
  ASSERT_TRUE(lease.Renew(t + 100ms).ok());  // a little later: the file may lag
  EXPECT_EQ(Ms(*ReadLeaseDeadline(path) - t), 0);
  ASSERT_TRUE(lease.Renew(t + 600ms).ok());
  EXPECT_EQ(Ms(*ReadLeaseDeadline(path) - t), 600);
  ASSERT_TRUE(lease.Renew(t + 550ms).ok());  // earlier (a shorter absence): written at once
  EXPECT_EQ(Ms(*ReadLeaseDeadline(path) - t), 550);
  LeaseFile next(path);
  ASSERT_TRUE(next.Inherit());
  EXPECT_EQ(Ms(*next.written() - t), 550);
  EXPECT_TRUE(LeaseFile("").Renew(t).ok());  // no state directory: nothing to write
}

}  // namespace
}  // namespace sluice::agent
