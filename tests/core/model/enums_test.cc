// Every enum of the model has a complete, distinct string table, and parsers invert it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/status.h"
#include "core/alloc/allocator.h"
#include "core/model/config.h"
#include "core/model/job.h"

namespace sluice::core {
namespace {

template <typename Enum, size_t N>
void ExpectDistinctNames(const Enum (&values)[N]) {
  std::set<std::string> names;
  for (Enum value : values) {
    const std::string name(ToString(value));
    EXPECT_NE(name, "unknown");
    EXPECT_NE(name, "UNKNOWN");
    EXPECT_TRUE(names.insert(name).second) << name;
  }
}

TEST(EnumsTest, StringTablesAreCompleteAndDistinct) {
  ExpectDistinctNames(
      {HostState::kOk, HostState::kClosed, HostState::kUnavail, HostState::kDraining});
  ExpectDistinctNames({PolicyKind::kFifo, PolicyKind::kBoundedBackfill, PolicyKind::kEasyBackfill});
  ExpectDistinctNames({OnHostLoss::kRequeue, OnHostLoss::kExit});
  ExpectDistinctNames({JobState::kPending, JobState::kHeld, JobState::kAdmitting,
                       JobState::kRunning, JobState::kDone, JobState::kExit, JobState::kCancelled});
  ExpectDistinctNames({ExitCause::kNone, ExitCause::kNonZeroExit, ExitCause::kUnschedulable,
                       ExitCause::kRunLimit, ExitCause::kHostLost});
  ExpectDistinctNames({StatusCode::kOk, StatusCode::kInvalidArgument, StatusCode::kNotFound,
                       StatusCode::kAlreadyExists, StatusCode::kFailedPrecondition,
                       StatusCode::kOutOfRange, StatusCode::kResourceExhausted,
                       StatusCode::kPermissionDenied, StatusCode::kUnauthenticated,
                       StatusCode::kUnavailable, StatusCode::kInternal});
}

TEST(EnumsTest, ParsersInvertToString) {
  for (HostState s :
       {HostState::kOk, HostState::kClosed, HostState::kUnavail, HostState::kDraining}) {
    EXPECT_EQ(ParseHostState(ToString(s)), s);
  }
  for (PolicyKind p :
       {PolicyKind::kFifo, PolicyKind::kBoundedBackfill, PolicyKind::kEasyBackfill}) {
    EXPECT_EQ(ParsePolicyKind(ToString(p)), p);
  }
  for (OnHostLoss a : {OnHostLoss::kRequeue, OnHostLoss::kExit}) {
    EXPECT_EQ(ParseOnHostLoss(ToString(a)), a);
  }
  EXPECT_EQ(ParseHostState("up"), std::nullopt);
  EXPECT_EQ(ParsePolicyKind("sjf"), std::nullopt);
}

TEST(EnumsTest, TerminalStates) {
  EXPECT_TRUE(IsTerminal(JobState::kDone));
  EXPECT_TRUE(IsTerminal(JobState::kExit));
  EXPECT_TRUE(IsTerminal(JobState::kCancelled));
  EXPECT_FALSE(IsTerminal(JobState::kPending));
  EXPECT_FALSE(IsTerminal(JobState::kRunning));
}

}  // namespace
}  // namespace sluice::core
