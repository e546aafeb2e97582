// Preemption across a controller restart (R-CAP-3, R-CAP-4, R-SRV-2): the marker — which job
// the victim is stopped for and when it is killed — is in the store, so a restarted
// controller keeps killing the victim with the remaining grace, requeues it (not EXIT) when
// it exits, and starts the job it was stopped for; a starved queue's reclaim deadline is
// stored too.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::KilledIds;
using testing::LaunchedIds;

// One host of 2 slots; `urgent` preempts `scavenger`, whose victims get 30 s of grace.
core::ClusterConfig PreemptionCluster() {
  core::ClusterConfig config;
  config.hosts = {core::HostSpec{.name = "h1", .slots = 2}};
  config.queues = {
      core::QueueSpec{.name = "urgent", .priority = 10, .preemptive = true},
      core::QueueSpec{
          .name = "scavenger", .priority = 1, .preemptable = true, .preempt_grace = 30}};
  return config;
}

json KillOf(const json& heartbeat, JobId id) {
  for (const json& k : heartbeat["kill"]) {
    if (k["job"] == id) return k;
  }
  return nullptr;
}

class PreemptionRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open(PreemptionCluster());
    ASSERT_EQ(h_->Register("h1", json::array(), 2).status, 200);
    victim_ = h_->Submit("alice", {{"command", "sleep 100"}, {"tasks", 2}, {"queue", "scavenger"}});
    h_->Cycle();
    ASSERT_EQ(LaunchedIds(h_->Heartbeat("h1")), std::vector<JobId>{victim_})
        << h_->Job(victim_) << h_->log();
    h_->Heartbeat("h1", json::array({victim_}));
    ASSERT_EQ(h_->State(victim_), "RUNNING");
    urgent_ = h_->Submit("bob", {{"command", "true"}, {"tasks", 2}, {"queue", "urgent"}});
    h_->Cycle();  // preempts the victim; the marker commits with the cycle
  }

  void Restart() {
    h_->Close();
    h_->Open(PreemptionCluster());
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
  JobId victim_ = 0;
  JobId urgent_ = 0;
};

TEST_F(PreemptionRestartTest, TheVictimIsKilledWithItsGraceBeforeARestart) {
  const json kill = KillOf(h_->Heartbeat("h1", json::array({victim_})), victim_);
  ASSERT_FALSE(kill.is_null());
  EXPECT_EQ(kill["grace_seconds"], 30);
  EXPECT_EQ(h_->State(urgent_), "PENDING");
}

TEST_F(PreemptionRestartTest, ARestartKeepsTheMarkerTheKillTimeAndTheRequeue) {
  h_->Advance(10'000);
  Restart();
  // The agent comes back still running the victim: the restarted controller goes on killing
  // it, with what is left of its grace (the kill time is stored, not restarted).
  ASSERT_EQ(h_->Register("h1", json::array({victim_}), 2).status, 200);
  EXPECT_EQ(h_->State(victim_), "RUNNING");
  const json kill = KillOf(h_->Heartbeat("h1", json::array({victim_})), victim_);
  ASSERT_FALSE(kill.is_null()) << "the restarted controller forgot the preemption";
  EXPECT_EQ(kill["grace_seconds"], 20);
  h_->Cycle();
  EXPECT_EQ(h_->State(urgent_), "PENDING");
  EXPECT_EQ(h_->Job(urgent_)["reasons"]["main"], "PREEMPTING");
  // Its exit (killed) requeues it at its position instead of ending it, and the job it was
  // stopped for starts on the freed host.
  const uint64_t seq = h_->Job(victim_)["admission"]["seq"];
  h_->Heartbeat("h1", json::array(), Exited(victim_, 143, "killed"));
  EXPECT_EQ(h_->State(victim_), "PENDING");
  EXPECT_EQ(h_->Job(victim_)["admission"]["seq"], seq);
  h_->Cycle();
  EXPECT_EQ(h_->State(urgent_), "ADMITTING");
  EXPECT_EQ(LaunchedIds(h_->Heartbeat("h1")), std::vector<JobId>{urgent_});
  // The requeued victim is not killed again when it runs later.
  EXPECT_TRUE(KilledIds(h_->Heartbeat("h1", json::array({urgent_}))).empty());
}

TEST_F(PreemptionRestartTest, AVictimThatExitedWhileTheControllerWasDownIsRequeued) {
  Restart();
  ASSERT_EQ(h_->Register("h1", json::array(), 2).status, 200);
  // Its exit report comes with the first heartbeat after registering.
  h_->Heartbeat("h1", json::array(), Exited(victim_, 143, "killed"));
  EXPECT_EQ(h_->State(victim_), "PENDING") << h_->Job(victim_);
  h_->Cycle();
  EXPECT_EQ(h_->State(urgent_), "ADMITTING");
}

TEST_F(PreemptionRestartTest, TheMarkerIsClearedWhenTheVictimIsRequeued) {
  h_->Heartbeat("h1", json::array(), Exited(victim_, 143, "killed"));
  ASSERT_EQ(h_->State(victim_), "PENDING");
  Restart();
  ASSERT_EQ(h_->Register("h1", json::array(), 2).status, 200);
  h_->Cycle();
  EXPECT_EQ(h_->State(urgent_), "ADMITTING");
  h_->Heartbeat("h1", json::array({urgent_}));
  // Once the urgent job is done, the requeued victim runs and nothing kills it.
  h_->Heartbeat("h1", json::array(), Exited(urgent_));
  h_->Cycle();
  ASSERT_EQ(h_->State(victim_), "ADMITTING");
  EXPECT_EQ(LaunchedIds(h_->Heartbeat("h1")), std::vector<JobId>{victim_});
  EXPECT_TRUE(KilledIds(h_->Heartbeat("h1", json::array({victim_}))).empty());
}

// R-CAP-3: a starved queue's reclaim deadline is stored; a restart does not give the
// borrowers a new reclaim_after.
TEST(ReclaimRestartTest, TheReclaimDeadlineSurvivesARestart) {
  core::ClusterConfig config;
  config.hosts = {core::HostSpec{.name = "h1", .slots = 2},
                  core::HostSpec{.name = "h2", .slots = 2}};
  config.queues = {core::QueueSpec{.name = "a", .capacity = 50, .reclaim_after = 100},
                   core::QueueSpec{.name = "b", .capacity = 50, .reclaim_after = 100}};
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open(config);
  ASSERT_EQ(h.Register("h1", json::array(), 2).status, 200);
  ASSERT_EQ(h.Register("h2", json::array(), 2).status, 200);
  for (int i = 0; i < 4; ++i) h.Submit("alice", {{"command", "sleep 1000"}, {"queue", "a"}});
  h.Cycle();
  std::map<std::string, json> running;
  for (const char* host : {"h1", "h2"}) {
    running[host] = json(LaunchedIds(h.Heartbeat(host)));
    h.Heartbeat(host, running[host]);
  }
  ASSERT_EQ(running["h1"].size() + running["h2"].size(), 4u);
  // Time passes in steps of 5 s with heartbeats (within the lease); returns the jobs killed.
  const auto pass = [&](int seconds) {
    size_t killed = 0;
    for (int t = 0; t < seconds; t += 5) {
      h.Advance(5'000);
      for (const char* host : {"h1", "h2"})
        killed += KilledIds(h.Heartbeat(host, running[host])).size();
      h.Cycle();
    }
    return killed;
  };
  ASSERT_EQ(pass(10), 0u);
  const JobId starved = h.Submit("bob", {{"command", "true"}, {"tasks", 2}, {"queue", "b"}});
  h.Cycle();  // queue b is below its guarantee: its reclaim deadline is now + 100 s
  ASSERT_EQ(pass(60), 0u);
  h.Close();
  h.Open(config);
  for (const char* host : {"h1", "h2"}) ASSERT_EQ(h.Register(host, running[host], 2).status, 200);
  h.Cycle();
  EXPECT_EQ(pass(35), 0u);
  // 105 s after the deadline was set (45 s after the restart): the borrowers are preempted.
  EXPECT_GE(pass(10), 1u) << "the restart reset the reclaim deadline; " << h.Job(starved)
                          << h.log();
}

}  // namespace
}  // namespace sluice::server
