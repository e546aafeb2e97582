// Issue 44: a controller outage used to kill every running job. An agent without a controller's
// answer for its lease killed all its jobs, so a controller restarted after 20 s (an upgrade,
// a reboot, a large state to read) made every host kill every job, and the jobs ran again from
// the start. Now agents keep their jobs for the controller's `--agent-absence-seconds`, and a
// restarted controller gives every host a fresh lease before it counts silence: a job running
// across an outage of three leases runs once and ends DONE.
//
// The outage's length is this test's input (the fault), so it is timed; every other wait is on
// a condition.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "integration/cluster_harness.h"

namespace sluice::integration {
namespace {

using namespace std::chrono_literals;

constexpr char kHosts[] = "hosts:\n  - {name: h1, slots: 2}\nqueues:\n  - {name: normal}\n";

std::vector<std::string> ServerFlags(const char* absence) {
  return {"--lease-seconds", "2", "--host-loss-grace-seconds", "2", "--agent-absence-seconds",
          absence};
}

// Runs one job that records each start, SIGKILLs the controller once it runs, keeps it down for
// three leases, restarts it and waits for the end. Returns the job's end state and its starts.
std::pair<std::string, size_t> RunAcrossAnOutage(const char* absence, std::string* logs) {
  Cluster c(DefaultClusterYaml(kHosts));
  std::string error;
  EXPECT_TRUE(c.StartServer(&error, ServerFlags(absence))) << error;
  c.StartAgent("h1", 2);
  EXPECT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; }, 30s)) << c.Logs();
  const std::string runs = (c.dir() / "runs").string();
  testing::ProcessResult submitted = c.Cli(
      {"submit", "--parsable", "--", "echo start >> " + runs + "; sleep 8"}, "alice-token");
  EXPECT_EQ(submitted.exit_code, 0) << submitted.stderr_text;
  const int64_t id = std::stoll(submitted.stdout_text);
  EXPECT_TRUE(Eventually([&] { return testing::ReadFile(runs).has_value(); }, 30s)) << c.Logs();
  c.KillServer(SIGKILL);
  std::this_thread::sleep_for(6s);  // the fault: three leases without a controller
  EXPECT_TRUE(c.StartServer(&error, ServerFlags(absence))) << error;
  EXPECT_TRUE(c.WaitAllEnded({id}, 60s)) << c.Logs();
  const std::string text = testing::ReadFile(runs).value_or("");
  *logs = c.Logs();
  return {c.JobState(id), static_cast<size_t>(std::count(text.begin(), text.end(), '\n'))};
}

TEST(ControllerOutageTest, ARunningJobSurvivesAnOutageOfThreeLeasesAndRunsOnce) {
  std::string logs;
  const auto [state, starts] = RunAcrossAnOutage("60", &logs);
  EXPECT_EQ(state, "DONE") << logs;
  EXPECT_EQ(starts, 1u) << logs;
}

// The behaviour before issue 44, still available (`--agent-absence-seconds 0`: the lease): the
// agent kills the job it can no longer report, and the job runs again. Shows that the test
// above would fail without the absence.
TEST(ControllerOutageTest, WithoutAnAbsenceTheJobIsKilledAndRunsAgain) {
  std::string logs;
  const auto [state, starts] = RunAcrossAnOutage("0", &logs);
  EXPECT_EQ(starts, 2u) << logs;
}

}  // namespace
}  // namespace sluice::integration
