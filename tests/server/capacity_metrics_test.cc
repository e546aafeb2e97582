// /metrics' capacity series (issue 47.10): per host, per user and per queue, and ended jobs as
// a counter that retention does not lower.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;
using testing::Exited;

// The value of the sample `name{labels}` (labels exactly as written); -1 when absent.
double Sample(const std::string& metrics, const std::string& name, const std::string& labels) {
  const std::string head = name + "{" + labels + "} ";
  const size_t at = metrics.find("\n" + head);
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + 1 + head.size()));
}

class CapacityMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    core::ClusterConfig config = testing::TestCluster();
    config.hosts[0].resources["mem"] = 8000;
    config.host_groups["small"] = {"h2"};
    config.queues.push_back(core::QueueSpec{.name = "narrow", .host_group = "small"});
    h_.Open(config);
    ASSERT_EQ(h_.Register("h1").status, 200);
    ASSERT_EQ(h_.Register("h2").status, 200);
  }
  std::string Metrics() { return h_.c().Metrics(); }

  sluice::testing::TempDir dir_;
  ControllerHarness h_{dir_.path().string()};
};

TEST_F(CapacityMetricsTest, HostsShowTheirSlotsResourcesJobsAndStatus) {
  h_.Submit("alice", {{"command", "x"}, {"tasks", 3}, {"resreq", "rusage[mem=1000]"}});
  h_.Cycle();
  const std::string m = Metrics();
  EXPECT_EQ(Sample(m, "sluice_host_slots", "host=\"h1\",state=\"total\""), 4) << m;
  EXPECT_EQ(Sample(m, "sluice_host_slots", "host=\"h1\",state=\"used\""), 3) << m;
  EXPECT_EQ(Sample(m, "sluice_host_slots", "host=\"h2\",state=\"used\""), 0) << m;
  EXPECT_EQ(Sample(m, "sluice_host_running_jobs", "host=\"h1\""), 1) << m;
  EXPECT_EQ(Sample(m, "sluice_host_resources", "host=\"h1\",resource=\"mem\",state=\"total\""),
            8000)
      << m;
  EXPECT_GT(Sample(m, "sluice_host_resources", "host=\"h1\",resource=\"mem\",state=\"used\""), 0)
      << m;
  // h2 has no memory configured: no series of a resource it does not have.
  EXPECT_EQ(Sample(m, "sluice_host_resources", "host=\"h2\",resource=\"mem\",state=\"total\""),
            -1)
      << m;
  EXPECT_EQ(Sample(m, "sluice_host_status", "host=\"h2\",status=\"ok\""), 1) << m;
  EXPECT_EQ(Sample(m, "sluice_host_status", "host=\"h2\",status=\"closed\""), 0) << m;

  const Caller root{.user = "root", .admin = true};
  ASSERT_TRUE(h_.c().HostAction(root, "h2", "close").ok());
  const std::string closed = Metrics();
  EXPECT_EQ(Sample(closed, "sluice_host_status", "host=\"h2\",status=\"ok\""), 0) << closed;
  EXPECT_EQ(Sample(closed, "sluice_host_status", "host=\"h2\",status=\"closed\""), 1) << closed;
}

TEST_F(CapacityMetricsTest, UsersShowTheirJobsByStateAndTheSlotsTheyHold) {
  // The first spans both hosts (listed under each): its 6 slots count once.
  h_.Submit("alice", {{"command", "x"}, {"tasks", 6}});
  h_.Submit("alice", {{"command", "x"}, {"tasks", 2}});
  h_.Submit("alice", {{"command", "x"}, {"tasks", 4}});  // waits: both hosts are full
  h_.Submit("bob", {{"command", "x"}, {"hold", true}});
  h_.Cycle();
  const std::string m = Metrics();
  EXPECT_EQ(Sample(m, "sluice_user_jobs", "user=\"alice\",state=\"ADMITTING\""), 2) << m;
  EXPECT_EQ(Sample(m, "sluice_user_jobs", "user=\"alice\",state=\"PENDING\""), 1) << m;
  EXPECT_EQ(Sample(m, "sluice_user_jobs", "user=\"bob\",state=\"HELD\""), 1) << m;
  EXPECT_EQ(Sample(m, "sluice_user_slots", "user=\"alice\""), 8) << m;
  EXPECT_EQ(Sample(m, "sluice_user_slots", "user=\"bob\""), -1) << m;  // holds none
}

TEST_F(CapacityMetricsTest, QueuesShowTheSlotsOfTheHostsTheyMayUse) {
  h_.Submit("alice", {{"command", "x"}, {"tasks", 2}, {"queue", "narrow"}});
  h_.Cycle();
  const std::string m = Metrics();
  EXPECT_EQ(Sample(m, "sluice_slots", "queue=\"normal\",state=\"total\""), 8) << m;
  EXPECT_EQ(Sample(m, "sluice_slots", "queue=\"narrow\",state=\"total\""), 4) << m;
  EXPECT_EQ(Sample(m, "sluice_slots", "queue=\"narrow\",state=\"used\""), 2) << m;
}

// Ended jobs are counted once each as they end; retention forgetting them does not lower the
// count, and the live gauge has no ended states.
TEST_F(CapacityMetricsTest, EndedJobsAreACounterThatRetentionDoesNotLower) {
  const JobId done = h_.Submit("alice", {{"command", "x"}});
  const JobId failed = h_.Submit("alice", {{"command", "x"}});
  const JobId cancelled = h_.Submit("alice", {{"command", "x"}, {"hold", true}});
  h_.Cycle();
  std::map<std::string, std::vector<JobId>> launched;
  for (const char* host : {"h1", "h2"}) {
    launched[host] = testing::LaunchedIds(h_.Heartbeat(host));
    h_.Heartbeat(host, launched[host]);  // they run
  }
  std::string m = Metrics();
  EXPECT_EQ(Sample(m, "sluice_jobs_ended_total", "state=\"DONE\",queue=\"normal\""), 0) << m;
  for (const auto& [host, ids] : launched) {
    for (JobId id : ids) h_.Heartbeat(host, json::array(), Exited(id, id == done ? 0 : 3));
  }
  ASSERT_EQ(h_.State(done), "DONE");
  ASSERT_EQ(h_.State(failed), "EXIT");
  ASSERT_TRUE(h_.c().Cancel(Caller{.user = "alice"}, cancelled).ok());
  m = Metrics();
  EXPECT_EQ(Sample(m, "sluice_jobs_ended_total", "state=\"DONE\",queue=\"normal\""), 1) << m;
  EXPECT_EQ(Sample(m, "sluice_jobs_ended_total", "state=\"EXIT\",queue=\"normal\""), 1) << m;
  EXPECT_EQ(Sample(m, "sluice_jobs_ended_total", "state=\"CANCELLED\",queue=\"normal\""), 1) << m;
  EXPECT_EQ(Sample(m, "sluice_jobs", "state=\"DONE\",queue=\"normal\""), -1) << m;
  EXPECT_NE(m.find("# TYPE sluice_jobs_ended_total counter"), std::string::npos) << m;
  h_.Advance(2 * 3600 * 1000);
  h_.Cycle();
  ASSERT_FALSE(h_.Job(done).contains("state")) << h_.Job(done);  // forgotten
  m = Metrics();
  EXPECT_EQ(Sample(m, "sluice_jobs_ended_total", "state=\"DONE\",queue=\"normal\""), 1) << m;
  EXPECT_EQ(Sample(m, "sluice_user_jobs", "user=\"alice\",state=\"DONE\""), -1) << m;
}

}  // namespace
}  // namespace sluice::server
