// Advance reservations in the simulator (R-RSV-1, R-RSV-2, issue 42): reservation lines of a
// JSONL workload, jobs naming one, and a job inside it ended with its window.
#include <gtest/gtest.h>

#include <string>

#include "core/model/cluster_state.h"
#include "sim/jsonl_reader.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace sluice::sim {
namespace {

using testing::ClusterBuilder;

Result<SimResult> RunSim(const core::ClusterConfig& config, const Workload& workload) {
  Result<core::ClusterState> state = core::ClusterState::Create(config);
  SLUICE_CHECK(state.has_value());
  Simulator simulator(std::move(*state), workload, SimOptions{});
  return simulator.Run(nullptr);
}

TEST(ReservationSimTest, ReservationLinesAreReadAndJobsNameThem) {
  Result<Workload> workload = ParseJsonl(
      R"({"reservation": {"name": "fix", "hosts": ["h1"], "windows": [[10, 20], [30, 40]], )"
      R"("maint": true, "overrun": 5, "users": ["root"], "groups": ["ops"]}})"
      "\n"
      R"({"id": 1, "submit": 0, "runtime": 5, "user": "root", "reservation": "fix"})"
      "\n",
      "w.jsonl", {});
  ASSERT_TRUE(workload.has_value()) << workload.error().message();
  ASSERT_EQ(workload->reservations.size(), 1u);
  const core::AdvanceReservationSpec& r = workload->reservations[0];
  EXPECT_EQ(r.name, "fix");
  EXPECT_EQ(r.hosts, std::vector<std::string>{"h1"});
  EXPECT_EQ(r.windows, (std::vector<core::ReservationWindow>{{10, 20}, {30, 40}}));
  EXPECT_TRUE(r.maint);
  EXPECT_EQ(r.overrun, 5);
  EXPECT_EQ(r.groups, std::vector<std::string>{"ops"});
  ASSERT_EQ(workload->jobs.size(), 1u);
  EXPECT_EQ(workload->jobs[0].spec.reservation, "fix");
}

TEST(ReservationSimTest, BadReservationLinesNameTheLineAndTheField) {
  const struct {
    std::string line;
    std::string expected;
  } cases[] = {
      {R"({"reservation": {"hosts": ["h1"], "begin": 1, "end": 2}})", "w.jsonl:1: reservation.name"},
      {R"({"reservation": {"name": "a", "begin": 1, "end": 2}})", "reservation.hosts"},
      {R"({"reservation": {"name": "a", "hosts": ["h1"], "begin": 5, "end": 2}})",
       "reservation.end"},
      {R"({"reservation": {"name": "a", "hosts": ["h1"], "begin": 1}})", "reservation.begin"},
      {R"({"reservation": {"name": "a", "hosts": ["h1"], "begin": 1, "end": 2, "windows": [[1, 2]]}})",
       "reservation.windows"},
      {R"({"reservation": {"name": "a", "hosts": ["h1"], "windows": [[1]]}})",
       "reservation.windows"},
      {R"({"reservation": {"name": "a", "hosts": "h1", "begin": 1, "end": 2}})",
       "reservation.hosts"},
      {R"({"reservation": {"name": "a", "hosts": ["h1"], "begin": 1, "end": 2, "color": 1}})",
       "reservation.color: unknown key"},
      {R"({"reservation": {"name": "a", "hosts": ["h1"], "begin": -1, "end": 2}})",
       "reservation.begin"},
      {R"({"id": 1, "submit": 0, "runtime": 1, "reservation": 7})", "reservation"},
  };
  for (const auto& c : cases) {
    Result<Workload> workload = ParseJsonl(c.line, "w.jsonl", {});
    ASSERT_FALSE(workload.has_value()) << c.line;
    EXPECT_NE(workload.error().message().find(c.expected), std::string::npos)
        << workload.error().message();
  }
}

TEST(ReservationSimTest, AJobInsideRunsInTheWindowAndEndsWithItOthersGoAround) {
  Result<Workload> workload = ParseJsonl(
      R"({"reservation": {"name": "course", "hosts": ["h1"], "begin": 100, "end": 200, "overrun": 10, "users": ["alice"]}})"
      "\n"
      R"({"id": 1, "submit": 0, "runtime": 500, "user": "alice", "reservation": "course"})"
      "\n"
      R"({"id": 2, "submit": 0, "runtime": 50, "run_limit": 150})"
      "\n",
      "w.jsonl", {});
  ASSERT_TRUE(workload.has_value()) << workload.error().message();
  Result<SimResult> result = RunSim(ClusterBuilder().Hosts(1, 1).Config(), *workload);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  // Job 2 would run into the window (limit 150 > 100): it waits until the window is over.
  EXPECT_EQ(result->records[1].start, 210);
  // Job 1 starts when the window opens and ends with it, plus the overrun.
  EXPECT_EQ(result->records[0].start, 100);
  EXPECT_EQ(result->records[0].end, 210);
  EXPECT_EQ(result->records[0].cause, core::ExitCause::kRunLimit);
}

TEST(ReservationSimTest, AJobOfAUserTheReservationDoesNotListNeverRunsInIt) {
  // The reservation's users reach the core: bob's job naming alice's reservation stays out of
  // it, though h1 is idle during the window, while alice's runs there.
  Result<Workload> workload = ParseJsonl(
      R"({"reservation": {"name": "course", "hosts": ["h1"], "begin": 100, "end": 200, "users": ["alice"]}})"
      "\n"
      R"({"id": 1, "submit": 0, "runtime": 50, "user": "bob", "reservation": "course"})"
      "\n"
      R"({"id": 2, "submit": 0, "runtime": 50, "user": "alice", "reservation": "course"})"
      "\n",
      "w.jsonl", {});
  ASSERT_TRUE(workload.has_value()) << workload.error().message();
  ASSERT_EQ(workload->reservations.size(), 1u);
  EXPECT_EQ(workload->reservations[0].users, std::vector<std::string>{"alice"});
  Result<SimResult> result = RunSim(ClusterBuilder().Hosts(1, 1).Config(), *workload);
  ASSERT_TRUE(result.has_value()) << result.error().message();
  EXPECT_EQ(result->records[1].start, 100);
  EXPECT_EQ(result->records[0].start, -1);  // never started
}

TEST(ReservationSimTest, AReservationTheClusterRefusesFailsTheRunNamingIt) {
  Result<Workload> workload = ParseJsonl(
      R"({"reservation": {"name": "course", "hosts": ["h9"], "begin": 100, "end": 200}})", "w.jsonl",
      {});
  ASSERT_TRUE(workload.has_value());
  Result<SimResult> result = RunSim(ClusterBuilder().Hosts(1, 1).Config(), *workload);
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message().find("reservation 'course': unknown host 'h9'"),
            std::string::npos)
      << result.error().message();
}

}  // namespace
}  // namespace sluice::sim
