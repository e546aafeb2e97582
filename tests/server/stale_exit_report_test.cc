// A requeued job's earlier run may be reported ended twice: the agent sends its exit on both
// of its links until one is acknowledged. A copy that arrives after the job was dispatched
// again must not end the new run (seen in an integration run: the rerun ended EXIT 143, the
// earlier run's SIGTERM, before it started). Launches carry a run number that the exit
// report echoes; a report of another run is acknowledged and ignored.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;

json ExitedRun(JobId id, int code, uint64_t run) {
  json exited = Exited(id, code);
  exited[0]["run"] = run;
  return exited;
}

// The launch of `id` in a heartbeat reply, or null.
json LaunchOf(const json& reply, JobId id) {
  for (const json& launch : reply["launch"]) {
    if (launch["job"] == id) return launch;
  }
  return nullptr;
}

TEST(StaleExitReportTest, AnEarlierRunsExitDoesNotEndTheJobsNextRun) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId id = h.Submit("alice", {{"command", "sleep 60"}, {"tasks", 1}});
  h.Cycle();
  const json first = LaunchOf(h.Heartbeat("h1"), id);
  ASSERT_TRUE(first.is_object()) << h.Job(id);
  const uint64_t first_run = first.value("run", uint64_t{0});
  ASSERT_NE(first_run, 0u);
  h.Heartbeat("h1", {id});
  ASSERT_EQ(h.State(id), "RUNNING");

  ASSERT_EQ(Reply(h.c().Requeue(Caller{.user = "alice"}, id)).status, 200);
  EXPECT_EQ(h.Heartbeat("h1", {id})["kill"].size(), 1u);
  EXPECT_EQ(h.Heartbeat("h1", json::array(), ExitedRun(id, 143, first_run))["ack"],
            json::array({id}));
  ASSERT_EQ(h.State(id), "PENDING");
  h.Cycle();
  ASSERT_EQ(h.State(id), "ADMITTING");

  // The copy of the first run's report, from the agent's other link. Its reply may already
  // carry the second launch.
  const json reply = h.Heartbeat("h1", json::array(), ExitedRun(id, 143, first_run));
  EXPECT_EQ(reply["ack"], json::array({id}));
  EXPECT_EQ(h.State(id), "ADMITTING") << h.Job(id);

  json second = LaunchOf(reply, id);
  if (second.is_null()) second = LaunchOf(h.Heartbeat("h1"), id);
  ASSERT_TRUE(second.is_object()) << h.Job(id);
  const uint64_t second_run = second.value("run", uint64_t{0});
  EXPECT_NE(second_run, first_run);
  h.Heartbeat("h1", {id});
  EXPECT_EQ(h.State(id), "RUNNING");
  h.Heartbeat("h1", json::array(), ExitedRun(id, 0, second_run));
  EXPECT_EQ(h.State(id), "DONE");
  EXPECT_EQ(h.Job(id)["exit_code"], 0);
}

// An agent that does not echo the run (older, or an exit recovered from its journal) is
// believed as before.
TEST(StaleExitReportTest, AnExitWithoutARunNumberEndsTheCurrentRun) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId id = h.Submit("alice", {{"command", "true"}, {"tasks", 1}});
  h.Cycle();
  ASSERT_TRUE(LaunchOf(h.Heartbeat("h1"), id).is_object());
  h.Heartbeat("h1", json::array(), Exited(id, 3));
  EXPECT_EQ(h.State(id), "EXIT");
  EXPECT_EQ(h.Job(id)["exit_code"], 3);
}

// A job dispatched to h1 (ADMITTING), and what the tests below do to its host: lose it and
// let it come back.
class DispatchedJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open();
    ASSERT_EQ(h_->Register("h1").status, 200);
    id_ = h_->Submit("alice", {{"command", "true"}, {"tasks", 1}});
    h_->Cycle();  // dispatched to h1
    ASSERT_EQ(h_->State(id_), "ADMITTING");
  }

  // h1 is silent for the lease + host-loss grace, its host is lost and the job requeued; then
  // its agent registers again (healed), listing no running job.
  void LoseAndHeal() {
    h_->Advance(10'000 + 5'000 + 1'000);
    h_->Cycle();
    ASSERT_EQ(h_->State(id_), "PENDING") << h_->Job(id_);
    ASSERT_EQ(h_->Register("h1").status, 200);
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
  JobId id_ = 0;
};

// Issue 44, "completed twice": a run ends while its host is cut off; the controller hears
// nothing for the absence + grace, declares the host lost and requeues the job; after the
// heal the agent reports that run's exit. The job has not run since: the report ends it.
class LostRunTest : public DispatchedJobTest {
 protected:
  void SetUp() override {
    DispatchedJobTest::SetUp();
    if (HasFatalFailure()) return;
    const json launch = LaunchOf(h_->Heartbeat("h1"), id_);
    ASSERT_TRUE(launch.is_object()) << h_->Job(id_);
    run_ = launch.value("run", uint64_t{0});
    h_->Heartbeat("h1", {id_});
    ASSERT_EQ(h_->State(id_), "RUNNING");
    LoseAndHeal();
  }

  uint64_t run_ = 0;
};

TEST_F(LostRunTest, ItsExitEndsTheRequeuedJobInsteadOfARerun) {
  EXPECT_EQ(h_->Heartbeat("h1", json::array(), ExitedRun(id_, 0, run_))["ack"],
            json::array({id_}));
  EXPECT_EQ(h_->State(id_), "DONE") << h_->Job(id_);
  h_->Cycle();
  EXPECT_TRUE(LaunchOf(h_->Heartbeat("h1"), id_).is_null()) << "run a second time";
}

TEST_F(LostRunTest, ItsExitEndsTheJobRelaunchedOnTheSameHostBeforeItStarts) {
  // The cycle ran before the report arrived and sent the job to h1 again; the agent does not
  // start a job whose exit it has not had acknowledged.
  h_->Cycle();
  const json again = LaunchOf(h_->Heartbeat("h1"), id_);
  ASSERT_TRUE(again.is_object()) << h_->Job(id_);
  ASSERT_NE(again.value("run", uint64_t{0}), run_);
  h_->Heartbeat("h1", json::array(), ExitedRun(id_, 3, run_));
  EXPECT_EQ(h_->State(id_), "EXIT") << h_->Job(id_);
  EXPECT_EQ(h_->Job(id_)["exit_code"], 3);
  h_->Cycle();
  EXPECT_TRUE(LaunchOf(h_->Heartbeat("h1"), id_).is_null());
}

TEST_F(LostRunTest, AFencedRunStaysRequeued) {
  json fenced = ExitedRun(id_, 128 + 9, run_);
  fenced[0]["cause"] = "fenced";  // its agent killed it: it did not end by itself
  h_->Heartbeat("h1", json::array(), fenced);
  EXPECT_EQ(h_->State(id_), "PENDING") << h_->Job(id_);
}

TEST_F(LostRunTest, ARunConfirmedSinceIsNotEndedByTheLostRunsExit) {
  h_->Cycle();
  const json again = LaunchOf(h_->Heartbeat("h1"), id_);
  ASSERT_TRUE(again.is_object()) << h_->Job(id_);
  h_->Heartbeat("h1", {id_});  // the second run started: the first run's end came too late
  ASSERT_EQ(h_->State(id_), "RUNNING");
  h_->Heartbeat("h1", {id_}, ExitedRun(id_, 0, run_));
  EXPECT_EQ(h_->State(id_), "RUNNING") << h_->Job(id_);
}

// The 30-minute nemesis (issue 44): a run started and ended while its leader could commit
// neither its RUNNING nor its exit (cut from etcd), and its host was cut off before it could
// tell the next leader, which had restored the job ADMITTING. That leader lost the host, and
// requeued the job without remembering the launch: the host's report after the heal was
// ignored and the job ran a second time. A launch that may have reached the agent is now
// lost like a run.
class LostLaunchTest : public DispatchedJobTest {};

TEST_F(LostLaunchTest, ItsExitEndsTheJobRequeuedBeforeItsAgentReportedIt) {
  const json launch = LaunchOf(h_->Heartbeat("h1"), id_);
  ASSERT_TRUE(launch.is_object()) << h_->Job(id_);
  LoseAndHeal();
  h_->Heartbeat("h1", json::array(), ExitedRun(id_, 0, launch.value("run", uint64_t{0})));
  EXPECT_EQ(h_->State(id_), "DONE") << h_->Job(id_);
}

TEST_F(LostLaunchTest, ARestoredLaunchsExitEndsTheJobRequeuedWithItsHost) {
  ASSERT_TRUE(LaunchOf(h_->Heartbeat("h1"), id_).is_object()) << h_->Job(id_);
  h_->Close();  // failover: the next leader restores the job ADMITTING on h1
  h_->Open();
  ASSERT_EQ(h_->State(id_), "ADMITTING");
  LoseAndHeal();
  h_->Heartbeat("h1", json::array(), Exited(id_, 0));  // the run the new leader did not number
  EXPECT_EQ(h_->State(id_), "DONE") << h_->Job(id_);
  h_->Cycle();
  EXPECT_TRUE(LaunchOf(h_->Heartbeat("h1"), id_).is_null()) << "run a second time";
}

TEST_F(LostLaunchTest, AJobWhoseLaunchNeverWentOutIsNotEndedByAnExit) {
  LoseAndHeal();  // h1's agent never polled for the launch
  h_->Heartbeat("h1", json::array(), Exited(id_, 0));  // not a run of this job: it never ran
  EXPECT_EQ(h_->State(id_), "PENDING") << h_->Job(id_);
}

}  // namespace
}  // namespace sluice::server
