// The agent's translation between the wire and its runner: a launch's run number reaches the
// runner and comes back in the exit report (so a stale report of an earlier run is known).
#include "agent/protocol.h"

#include <gtest/gtest.h>

namespace sluice::agent {
namespace {

TEST(AgentProtocolTranslationTest, TheLaunchsRunComesBackInTheExitReport) {
  const JobSpec spec = JobSpecOf(wire::Launch{.job = 4, .run = 9, .command = "true"}, "/tmp");
  EXPECT_EQ(spec.job, 4);
  EXPECT_EQ(spec.run, 9u);
  EXPECT_EQ(spec.cwd, "/tmp");
  const wire::ExitReport report =
      ExitReportOf(JobExit{.job = 4, .run = spec.run, .signal = 15, .cause = ExitCause::kKilled});
  EXPECT_EQ(report.job, 4);
  EXPECT_EQ(report.run, 9u);
  EXPECT_EQ(report.ShellStatus(), 143);
}

}  // namespace
}  // namespace sluice::agent
