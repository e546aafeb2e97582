// Issue 47.3: a host that cannot launch (its cgroup tree gone, fork failing, launches that hang)
// used to stay "ok" while every job sent to it ended DISPATCH_FAILED. A launch failure the host
// caused (wire::LaunchFailure::host_fault) requeues the job without using up an attempt, and
// after `close_host_after_launch_failures` in a row the host is closed with the cause; the
// job's own faults (its files, its program) count against the job as before and never close
// the host.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using testing::ControllerHarness;
using nlohmann::json;
using ::sluice::testing::TempDir;

// Dispatches `id` to h1 (the only registered host) and returns the launches h1 receives.
json Dispatch(ControllerHarness& h) {
  h.Cycle();
  return h.Heartbeat("h1")["launch"];
}

json Failure(JobId id, bool host_fault) {
  return json::array({{{"job", id}, {"message", "join cgroup: gone"}, {"host_fault", host_fault}}});
}

json HostNamed(ControllerHarness& h, const std::string& name) {
  for (const json& host : Reply(h.c().Hosts()).body) {
    if (host["name"] == name) return host;
  }
  return json();
}

TEST(LaunchFailureTest, AHostThatKeepsFailingLaunchesIsClosedWithTheCauseAndItsJobsWait) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(Reply(h.Register("h1")).status, 200);
  const JobId id = h.Submit("alice", {{"command", "true"}});
  for (int attempt = 1; attempt <= 3; ++attempt) {
    SCOPED_TRACE(attempt);
    const json launch = Dispatch(h);
    ASSERT_EQ(launch.size(), 1u) << launch.dump();
    h.Heartbeat("h1", json::array(), json::array(), Failure(id, true));
    EXPECT_EQ(h.State(id), "PENDING") << h.Job(id).dump();
    EXPECT_EQ(h.Job(id)["dispatch_attempts"], 0);  // not the job's fault
  }
  const json host = HostNamed(h, "h1");
  EXPECT_EQ(host["state"], "closed") << host.dump();
  EXPECT_NE(host.value("reason", "").find("3 launches in a row failed: join cgroup: gone"),
            std::string::npos)
      << host.dump();
  // Closed: nothing more is sent to it, and the job waits (rather than failing).
  EXPECT_TRUE(Dispatch(h).empty());
  EXPECT_EQ(h.State(id), "PENDING");
  // Opened again by an administrator: the count starts over and the job runs.
  EXPECT_EQ(Reply(h.c().HostAction(Caller{.user = "root", .admin = true}, "h1", "open")).status,
            200);
  EXPECT_FALSE(HostNamed(h, "h1").contains("reason"));
  ASSERT_EQ(Dispatch(h).size(), 1u);
  h.Heartbeat("h1", json::array({id}));
  EXPECT_EQ(h.State(id), "RUNNING");
}

TEST(LaunchFailureTest, TheJobsOwnFaultsCountAgainstTheJobAndLeaveTheHostOpen) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(Reply(h.Register("h1")).status, 200);
  const JobId id = h.Submit("alice", {{"command", "true"}});
  for (int attempt = 1; attempt <= 3; ++attempt) {
    ASSERT_EQ(Dispatch(h).size(), 1u);
    h.Heartbeat("h1", json::array(), json::array(), Failure(id, false));
  }
  EXPECT_EQ(h.State(id), "EXIT");
  EXPECT_EQ(h.Job(id)["cause"], "DISPATCH_FAILED");
  EXPECT_EQ(HostNamed(h, "h1")["state"], "ok");
}

TEST(LaunchFailureTest, AConfirmedStartResetsTheCount) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(Reply(h.Register("h1")).status, 200);
  for (int round = 0; round < 3; ++round) {
    const JobId failing = h.Submit("alice", {{"command", "true"}});
    for (int attempt = 0; attempt < 2; ++attempt) {
      ASSERT_EQ(Dispatch(h).size(), 1u);
      h.Heartbeat("h1", json::array(), json::array(), Failure(failing, true));
    }
    ASSERT_EQ(Dispatch(h).size(), 1u);
    h.Heartbeat("h1", json::array({failing}));  // it started: the host can launch after all
    EXPECT_EQ(h.State(failing), "RUNNING");
  }
  EXPECT_EQ(HostNamed(h, "h1")["state"], "ok");
}

}  // namespace
}  // namespace sluice::server
