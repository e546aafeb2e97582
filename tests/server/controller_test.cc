// The controller's state machine (R-SRV-1 … R-SRV-3, R-SRV-6), driven without sockets.
#include "server/controller.h"

#include <gtest/gtest.h>

#include "server/controller_fixture.h"
#include "server/http_reply.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::KilledIds;
using testing::LaunchedIds;

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open();
  }
  void Restart() {
    h_->Close();
    h_->Open();
  }
  void RegisterBoth() {
    ASSERT_EQ(h_->Register("h1").status, 200);
    ASSERT_EQ(h_->Register("h2").status, 200);
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
};

// A job's script may start a step before its agent's confirmation of the start reached the
// controller (seen under load: `sluice launch` refused with "job is ADMITTING"): an ADMITTING
// job holds its allocation and takes steps; a pending one does not.
TEST_F(ControllerTest, StepsStartInAnAdmittingJobButNotInAPendingOne) {
  const JobId id = h_->Submit("alice", {{"command", "sleep 60"}, {"tasks", 2}});
  const json step = {{"host", "h1"}, {"command", "hostname"}};
  Reply refused = h_->c().OpenStep(Caller{.user = "alice"}, id, step);
  EXPECT_EQ(refused.status, 409) << refused.body.dump();
  RegisterBoth();
  h_->Cycle();
  ASSERT_EQ(h_->State(id), "ADMITTING");
  const json hosts = h_->Job(id)["hosts"];
  ASSERT_FALSE(hosts.empty());
  Reply opened = h_->c().OpenStep(Caller{.user = "alice"}, id,
                                  {{"host", hosts[0]["name"]}, {"command", "hostname"}});
  EXPECT_EQ(opened.status, 200) << opened.body.dump();  // 201 over HTTP
  EXPECT_EQ(opened.body["step"], 1) << opened.body.dump();
}

TEST_F(ControllerTest, AJobGoesPendingAdmittingRunningDone) {
  RegisterBoth();
  const JobId id = h_->Submit(
      "alice",
      {{"command", "echo hi"}, {"tasks", 6}, {"output", "/tmp/o.%j"}, {"env", {{"A", "1"}}}});
  EXPECT_EQ(h_->State(id), "PENDING");
  h_->Cycle();
  EXPECT_EQ(h_->State(id), "ADMITTING");
  // Only the first host of the allocation launches it, once the ADMITTING row committed.
  EXPECT_TRUE(LaunchedIds(h_->Heartbeat("h2")).empty());
  json hb = h_->Heartbeat("h1");
  ASSERT_EQ(LaunchedIds(hb), std::vector<JobId>{id});
  const json& launch = hb["launch"][0];
  EXPECT_EQ(launch["argv"], json::array({"/bin/sh", "-c", "echo hi"}));
  EXPECT_EQ(launch["output"], "/tmp/o." + std::to_string(id));
  EXPECT_EQ(launch["error"], launch["output"]);
  EXPECT_EQ(launch["env"]["SLUICE_JOB_ID"], std::to_string(id));
  EXPECT_EQ(launch["env"]["SLUICE_NTASKS"], "6");
  std::string hosts;
  const json job_hosts = h_->Job(id)["hosts"];
  for (const json& g : job_hosts) {
    hosts += (hosts.empty() ? "" : ",") + g["name"].get<std::string>() + ":" +
             std::to_string(g["slots"].get<int>());
  }
  EXPECT_EQ(launch["env"]["SLUICE_HOSTS"], hosts);
  EXPECT_EQ(hosts.substr(0, 3), "h1:");
  EXPECT_EQ(launch["env"]["A"], "1");
  EXPECT_EQ(launch["user"], "alice");
  // Not repeated while it waits for confirmation.
  EXPECT_TRUE(LaunchedIds(h_->Heartbeat("h1")).empty());
  h_->Heartbeat("h1", {id});
  EXPECT_EQ(h_->State(id), "RUNNING");
  json done = h_->Heartbeat("h1", json::array(), Exited(id, 0));
  EXPECT_EQ(done["ack"], json::array({id}));
  json job = h_->Job(id);
  EXPECT_EQ(job["state"], "DONE");
  EXPECT_EQ(job["exit_code"], 0);
  EXPECT_EQ(job["hosts"].size(), 2u);
  // A duplicate report is acknowledged and changes nothing.
  EXPECT_EQ(h_->Heartbeat("h1", json::array(), Exited(id, 5))["ack"], json::array({id}));
  EXPECT_EQ(h_->State(id), "DONE");
}

TEST_F(ControllerTest, NonZeroExitAndRunLimitEndInExitWithTheirCause) {
  RegisterBoth();
  const JobId a = h_->Submit("alice", {{"command", "false"}});
  const JobId b = h_->Submit("alice", {{"command", "sleep 99"}, {"run_limit", 5}});
  h_->Cycle();
  h_->Heartbeat("h1");
  h_->Heartbeat("h1", {a, b});
  h_->Heartbeat("h1", json::array(), Exited(a, 1));
  h_->Heartbeat("h1", json::array(), Exited(b, 137, "run_limit"));
  EXPECT_EQ(h_->Job(a)["cause"], "NON_ZERO_EXIT");
  EXPECT_EQ(h_->Job(b)["cause"], "RUN_LIMIT");
  EXPECT_EQ(h_->State(b), "EXIT");
}

TEST_F(ControllerTest, NothingRunsOnHostsWhoseAgentIsNotRegistered) {
  const JobId id = h_->Submit("alice", {{"command", "true"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(id), "PENDING");
  EXPECT_EQ(h_->Job(id)["reason"], "HOST_UNAVAIL");
  ASSERT_EQ(h_->Register("h2").status, 200);
  h_->Cycle();
  EXPECT_EQ(h_->State(id), "ADMITTING");
  EXPECT_EQ(h_->Job(id)["hosts"][0]["name"], "h2");
}

TEST_F(ControllerTest, UnknownAgentsAreAddedAndPersisted) {
  ASSERT_EQ(Reply(h_->c().Register({{"name", "x9"},
                                    {"slots", 2},
                                    {"running", json::array()},
                                    {"epoch", 0},
                                    {"attributes", {{"type", "gpu"}}}}))
                .status,
            200);
  const JobId id = h_->Submit("alice", {{"command", "true"}, {"tasks", 2}});
  h_->Cycle();
  EXPECT_EQ(h_->Job(id)["hosts"][0]["name"], "x9");
  Restart();
  json hosts = Reply(h_->c().Hosts()).body;
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[2]["name"], "x9");
  EXPECT_EQ(hosts[2]["slots"], 2);
  EXPECT_EQ(hosts[2]["state"], "unavail");  // until its agent is back
}

TEST_F(ControllerTest, HeartbeatsNeedARegistrationAndTheRightEpoch) {
  EXPECT_EQ(Reply(h_->c().Heartbeat("h1", {{"epoch", 1}, {"wait_ms", 0}})).status, 404);
  RegisterBoth();
  EXPECT_EQ(Reply(h_->c().Heartbeat("h1", {{"epoch", 99}, {"wait_ms", 0}})).status, 409);
  EXPECT_EQ(Reply(h_->c().Register({{"name", "h1"}, {"epoch", 99}})).status, 409);
  EXPECT_EQ(Reply(h_->c().Heartbeat("h1", {{"epoch", 1}, {"bogus", 0}})).status, 400);
  EXPECT_EQ(Reply(h_->c().Register({{"name", "bad name"}})).status, 400);
}

TEST_F(ControllerTest, AnAcknowledgedSubmissionSurvivesARestart) {
  const JobId a = h_->Submit("alice", {{"command", "true"}, {"queue", "bf"}, {"priority", 3}});
  Reply batch = h_->c().SubmitBatch(
      testing::TestAuth().users[0].name == "alice" ? Caller{.user = "alice"} : Caller{},
      {{"jobs", json::array({{{"command", "a"}}, {{"command", "b"}}})}});
  ASSERT_EQ(batch.status, 200);
  Restart();
  EXPECT_EQ(h_->c().epoch(), 2u);
  json jobs = Reply(h_->c().ListJobs({})).Json();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0]["id"], a);
  EXPECT_EQ(jobs[0]["queue"], "bf");
  EXPECT_EQ(jobs[0]["priority"], 3);
  EXPECT_EQ(jobs[1]["state"], "PENDING");
  // New ids continue after the restored ones.
  EXPECT_EQ(h_->Submit("alice", {{"command", "c"}}), a + 3);
}

// R-SRV-2: after a restart nothing is scheduled while ADMITTING records are unresolved; a
// job its agent reports becomes RUNNING, one it does not is requeued at its sequence.
TEST_F(ControllerTest, RestartReconcilesAdmittingRecordsBeforeAnyCycle) {
  RegisterBoth();
  const JobId a = h_->Submit("alice", {{"command", "a"}, {"tasks", 4}});
  const JobId b = h_->Submit("alice", {{"command", "b"}, {"tasks", 4}});
  const JobId c = h_->Submit("alice", {{"command", "c"}, {"tasks", 4}});
  h_->Cycle();
  ASSERT_EQ(h_->State(a), "ADMITTING");
  ASSERT_EQ(h_->State(b), "ADMITTING");
  const uint64_t seq_b = h_->Job(b)["admission"]["seq"].get<uint64_t>();
  Restart();
  EXPECT_TRUE(h_->c().Reconciling());
  h_->Cycle();
  EXPECT_EQ(h_->State(c), "PENDING");
  ASSERT_EQ(h_->Register(h_->Job(a)["hosts"][0]["name"], {a}).status, 200);
  EXPECT_EQ(h_->State(a), "RUNNING");
  EXPECT_TRUE(h_->c().Reconciling());  // b's agent is not back: unknown, not idle
  h_->Cycle();
  EXPECT_EQ(h_->State(c), "PENDING");
  const std::string host_b = h_->Job(b)["hosts"][0]["name"];
  ASSERT_EQ(h_->Register(host_b).status, 200);
  EXPECT_TRUE(h_->c().Reconciling());  // resolved at its first heartbeat, after its reports
  h_->Heartbeat(host_b);
  EXPECT_FALSE(h_->c().Reconciling());
  EXPECT_EQ(h_->State(b), "PENDING");
  EXPECT_EQ(h_->Job(b)["admission"]["seq"], seq_b);
  h_->Cycle();
  // b keeps its place ahead of c.
  EXPECT_EQ(h_->State(b), "ADMITTING");
  EXPECT_EQ(h_->State(c), "PENDING");
}

// A job that ended while the controller was down is reported by the agent's first heartbeat
// after it registers again (not listed as running): it ends, it is not requeued to run twice.
TEST_F(ControllerTest, AJobThatEndedDuringTheRestartIsNotRequeued) {
  RegisterBoth();
  const JobId a = h_->Submit("alice", {{"command", "a"}, {"tasks", 4}});
  const JobId b = h_->Submit("alice", {{"command", "b"}, {"tasks", 4}});
  h_->Cycle();
  const std::string host_a = h_->Job(a)["hosts"][0]["name"];
  const std::string host_b = h_->Job(b)["hosts"][0]["name"];
  h_->Heartbeat(host_a);
  h_->Heartbeat(host_b);
  h_->Heartbeat(host_a, {a});  // a RUNNING; b launched but never confirmed (ADMITTING)
  Restart();
  ASSERT_EQ(h_->Register(host_a).status, 200);
  ASSERT_EQ(h_->Register(host_b).status, 200);
  h_->Heartbeat(host_a, json::array(), Exited(a, 0));
  h_->Heartbeat(host_b, json::array(), Exited(b, 3));
  EXPECT_EQ(h_->State(a), "DONE");
  EXPECT_EQ(h_->State(b), "EXIT");
  h_->Cycle();
  EXPECT_EQ(h_->Job(a)["dispatch_attempts"], 0);
  EXPECT_EQ(h_->State(a), "DONE");
}

TEST_F(ControllerTest, AnAgentThatNeverComesBackIsLostAfterLeaseAndGrace) {
  RegisterBoth();
  const JobId a = h_->Submit("alice", {{"command", "a"}, {"tasks", 4}});
  h_->Cycle();
  const std::string host = h_->Job(a)["hosts"][0]["name"];
  h_->Heartbeat(host);
  h_->Heartbeat(host, {a});
  ASSERT_EQ(h_->State(a), "RUNNING");
  Restart();
  h_->Advance(14'000);
  h_->Cycle();
  EXPECT_EQ(h_->State(a), "RUNNING");  // within lease + grace: unknown
  h_->Advance(2'000);
  h_->Cycle();
  EXPECT_EQ(h_->State(a), "PENDING");  // normal: on_host_loss requeue
}

// Issue 44: with the agents' absence longer than the lease, a silent host takes no new work
// after the lease but keeps its jobs until absence + grace (its agent keeps them running that
// long), then on_host_loss applies. A restarted controller counts from its own start.
TEST(ControllerAbsenceTest, ASilentHostKeepsItsJobsUntilTheAbsenceAndGraceHavePassed) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.set_agent_absence_ms(60'000);
  h.Open();
  ASSERT_EQ(Reply(h.Register("h1")).status, 200);
  const JobId a = h.Submit("alice", {{"command", "a"}});
  h.Cycle();
  h.Heartbeat("h1");
  h.Heartbeat("h1", {a});
  ASSERT_EQ(h.State(a), "RUNNING");
  h.Advance(16'000);  // past lease + grace
  h.Cycle();
  EXPECT_EQ(Reply(h.c().Hosts()).body[0]["state"], "unavail");
  EXPECT_EQ(h.State(a), "RUNNING");
  h.Advance(48'000);  // 64 s: past the absence, within absence + grace
  h.Cycle();
  EXPECT_EQ(h.State(a), "RUNNING");
  h.Advance(2'000);  // 66 s: past absence + grace
  h.Cycle();
  EXPECT_EQ(h.State(a), "PENDING");  // normal: on_host_loss requeue
}

TEST_F(ControllerTest, LeaseExpiryMakesTheHostUnavailThenAppliesOnHostLoss) {
  RegisterBoth();
  const JobId a = h_->Submit("alice", {{"command", "a"}, {"tasks", 4}});
  const JobId s = h_->Submit("alice", {{"command", "s"}, {"tasks", 4}, {"queue", "strict"}});
  h_->Cycle();
  for (const char* host : {"h1", "h2"}) h_->Heartbeat(host);
  h_->Heartbeat("h1", {a, s});
  h_->Heartbeat("h2", {a, s});
  ASSERT_EQ(h_->State(a), "RUNNING");
  ASSERT_EQ(h_->State(s), "RUNNING");
  h_->Advance(10'500);
  h_->Cycle();
  json hosts = Reply(h_->c().Hosts()).body;
  EXPECT_EQ(hosts[0]["state"], "unavail");
  EXPECT_EQ(hosts[1]["state"], "unavail");
  EXPECT_EQ(h_->State(a), "RUNNING");
  h_->Advance(5'000);
  h_->Cycle();
  EXPECT_EQ(h_->State(a), "PENDING");
  json sj = h_->Job(s);
  EXPECT_EQ(sj["state"], "EXIT");
  EXPECT_EQ(sj["cause"], "HOST_LOST");
  // The agent comes back: its host accepts work again; a stale running report is killed.
  ASSERT_EQ(h_->Register("h1", {a}).status, 200);
  json hb = h_->Heartbeat("h1", {a});
  EXPECT_EQ(KilledIds(hb), std::vector<JobId>{a});
}

TEST_F(ControllerTest, CancelPendingAdmittingAndRunning) {
  RegisterBoth();
  const JobId a = h_->Submit("alice", {{"command", "a"}, {"tasks", 4}});
  const JobId b = h_->Submit("alice", {{"command", "b"}, {"tasks", 4}});
  const JobId c = h_->Submit("alice", {{"command", "c"}, {"tasks", 4}});
  EXPECT_EQ(Reply(h_->c().Cancel(Caller{.user = "bob"}, c)).status, 403);
  EXPECT_EQ(Reply(h_->c().Cancel(Caller{.user = "alice"}, c)).body["state"], "CANCELLED");
  EXPECT_EQ(Reply(h_->c().Cancel(Caller{.user = "alice"}, c)).status, 409);
  h_->Cycle();
  // b is ADMITTING and its launch has not gone out: released at once.
  EXPECT_EQ(Reply(h_->c().Cancel(Caller{.user = "root", .admin = true}, b)).status, 200);
  const std::string host_a = h_->Job(a)["hosts"][0]["name"];
  ASSERT_EQ(LaunchedIds(h_->Heartbeat(host_a)), std::vector<JobId>{a});
  // a was launched: cancelling it kills it; the slots come back when the kill is reported.
  EXPECT_EQ(Reply(h_->c().Cancel(Caller{.user = "alice"}, a)).body["state"], "CANCELLED");
  EXPECT_EQ(KilledIds(h_->Heartbeat(host_a, {a})), std::vector<JobId>{a});
  EXPECT_EQ(Reply(h_->c().Hosts()).body[0]["used_slots"].get<int>() +
                Reply(h_->c().Hosts()).body[1]["used_slots"].get<int>(),
            4);
  h_->Heartbeat(host_a, json::array(), Exited(a, 143, "killed"));
  EXPECT_EQ(h_->State(a), "CANCELLED");
  EXPECT_EQ(Reply(h_->c().Hosts()).body[0]["used_slots"], 0);
  EXPECT_EQ(Reply(h_->c().Hosts()).body[1]["used_slots"], 0);
}

TEST_F(ControllerTest, FailedLaunchesRependThenEndWithDispatchFailed) {
  RegisterBoth();
  const JobId a = h_->Submit("alice", {{"command", "a"}, {"tasks", 4}});
  for (int attempt = 1; attempt <= 3; ++attempt) {
    h_->Cycle();
    ASSERT_EQ(h_->State(a), "ADMITTING") << attempt;
    const std::string host = h_->Job(a)["hosts"][0]["name"];
    ASSERT_EQ(LaunchedIds(h_->Heartbeat(host)), std::vector<JobId>{a});
    json failed = json::array({{{"job", a}, {"message", "cwd: no such directory"}}});
    EXPECT_EQ(h_->Heartbeat(host, json::array(), json::array(), failed)["ack"], json::array({a}));
    EXPECT_EQ(h_->Job(a)["dispatch_attempts"], attempt);
  }
  json job = h_->Job(a);
  EXPECT_EQ(job["state"], "EXIT");
  EXPECT_EQ(job["cause"], "DISPATCH_FAILED");
}

TEST_F(ControllerTest, HoldAndReleaseKeepTheJobsPlace) {
  const JobId a = h_->Submit("alice", {{"command", "a"}, {"tasks", 8}});
  EXPECT_EQ(Reply(h_->c().Hold(Caller{.user = "bob"}, a, true)).status, 403);
  EXPECT_EQ(Reply(h_->c().Hold(Caller{.user = "alice"}, a, true)).body["state"], "HELD");
  EXPECT_EQ(Reply(h_->c().Hold(Caller{.user = "alice"}, a, true)).status, 409);
  const JobId b = h_->Submit("alice", {{"command", "b"}, {"tasks", 8}});
  Restart();
  EXPECT_EQ(h_->State(a), "HELD");
  RegisterBoth();
  h_->Cycle();
  EXPECT_EQ(h_->State(b), "ADMITTING");
  EXPECT_EQ(Reply(h_->c().Hold(Caller{.user = "alice"}, a, false)).body["state"], "PENDING");
  EXPECT_LT(h_->Job(a)["admission"]["seq"], h_->Job(b)["admission"]["seq"]);
}

TEST_F(ControllerTest, SubmissionsAreCheckedAgainstQueuesAndRequests) {
  EXPECT_EQ(
      Reply(h_->c().Submit(Caller{.user = "alice"}, {{"command", "x"}, {"queue", "nope"}})).status,
      400);
  Reply bad = h_->c().Submit(Caller{.user = "alice"}, {{"command", "x"}, {"resreq", "select[foo"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body["error"].get<std::string>().find("job.resreq"), std::string::npos) << bad.body;
  EXPECT_EQ(
      Reply(h_->c().Submit(Caller{.user = "alice"}, {{"command", "x"}, {"tasks", "four"}})).status,
      400);
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "alice"}, {{"command", "x"}, {"extra", 1}})).status,
            400);
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "alice"}, {{"tasks", 1}})).status, 400);
  // A batch is all or nothing and names the bad index.
  Reply batch = h_->c().SubmitBatch(
      Caller{.user = "alice"},
      {{"jobs",
        json::array({{{"command", "a"}}, {{"command", "b"}, {"resreq", "rusage[nope=1]"}}})}});
  EXPECT_EQ(batch.status, 400);
  EXPECT_NE(batch.body["error"].get<std::string>().find("jobs[1]"), std::string::npos)
      << batch.body;
  EXPECT_TRUE(Reply(h_->c().ListJobs({})).Json().empty());
  // A job refused while it is taken in (a dependency that does not parse) takes the batch's
  // earlier jobs out again: nothing unacknowledged stays, runs, or comes back on restart.
  Reply late = h_->c().SubmitBatch(
      Caller{.user = "alice"},
      {{"jobs", json::array({{{"command", "a"}}, {{"command", "b"}, {"depend", "done(("}}})}});
  EXPECT_EQ(late.status, 400);
  EXPECT_NE(late.body["error"].get<std::string>().find("jobs[1]: "), std::string::npos)
      << late.body;
  EXPECT_TRUE(Reply(h_->c().ListJobs({})).Json().empty());
  RegisterBoth();
  h_->Cycle();
  EXPECT_TRUE(Reply(h_->c().ListJobs({})).Json().empty());
  const JobId next = h_->Submit("alice", {{"command", "c"}});
  // The refused batch's first job (id next - 2) is unknown, not an ended job.
  EXPECT_EQ(Reply(h_->c().GetJob(next - 2)).body["error"], "no job " + std::to_string(next - 2));
  // A job depending on it would never start: refused before it takes an id (issue 47.7).
  const Reply dependent =
      h_->c().Submit(Caller{.user = "alice"},
                     {{"command", "d"}, {"depend", "ended(" + std::to_string(next - 2) + ")"}});
  EXPECT_EQ(dependent.status, 422) << dependent.body.dump();
  EXPECT_EQ(dependent.body["cause"]["reason"], "DEPENDENCY") << dependent.body.dump();
  Restart();
  ASSERT_EQ(Reply(h_->c().ListJobs({})).Json().size(), 1u);
  EXPECT_EQ(Reply(h_->c().ListJobs({})).Json()[0]["id"], next);
}

TEST_F(ControllerTest, SubmitUsersLimitWhoMaySubmitToAQueue) {
  core::ClusterConfig config = testing::TestCluster();
  config.queues[1].submit_users = std::vector<std::string>{"bob"};
  ASSERT_EQ(Reply(h_->c().Reconfigure(config)).status, 200);
  EXPECT_EQ(
      Reply(h_->c().Submit(Caller{.user = "alice"}, {{"command", "x"}, {"queue", "bf"}})).status,
      403);
  EXPECT_EQ(
      Reply(h_->c().Submit(Caller{.user = "bob"}, {{"command", "x"}, {"queue", "bf"}})).status,
      200);
}

TEST_F(ControllerTest, ReconfigureRefusesRemovingAQueueWithJobsAndKeepsTheOldConfig) {
  h_->Submit("alice", {{"command", "x"}, {"queue", "bf"}});
  core::ClusterConfig config = testing::TestCluster();
  config.queues.erase(config.queues.begin() + 1);
  Reply r = h_->c().Reconfigure(config);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["error"].get<std::string>().find("bf"), std::string::npos);
  EXPECT_EQ(Reply(h_->c().Queues()).body.size(), 3u);
}

TEST_F(ControllerTest, AdminsOpenAndCloseQueuesAndHosts) {
  RegisterBoth();
  EXPECT_EQ(Reply(h_->c().QueueAction(Caller{.user = "alice"}, "normal", "close")).status, 403);
  EXPECT_EQ(Reply(h_->c().QueueAction(Caller{.user = "root", .admin = true}, "normal", "close"))
                .body["open"],
            false);
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "alice"}, {{"command", "x"}})).status, 400);
  (void)h_->c().QueueAction(Caller{.user = "root", .admin = true}, "normal", "open");
  EXPECT_EQ(
      Reply(h_->c().HostAction(Caller{.user = "root", .admin = true}, "h1", "close")).body["state"],
      "closed");
  const JobId a = h_->Submit("alice", {{"command", "x"}});
  h_->Cycle();
  EXPECT_EQ(h_->Job(a)["hosts"][0]["name"], "h2");
  EXPECT_EQ(
      Reply(h_->c().HostAction(Caller{.user = "root", .admin = true}, "nope", "close")).status,
      404);
}

// An administrator's closed queue, inactive queue and closed host stay so across a restart.
TEST_F(ControllerTest, AdminOverridesSurviveARestart) {
  RegisterBoth();
  const Caller root{.user = "root", .admin = true};
  ASSERT_EQ(Reply(h_->c().QueueAction(root, "normal", "close")).status, 200);
  ASSERT_EQ(Reply(h_->c().QueueAction(root, "bf", "inactivate")).status, 200);
  ASSERT_EQ(Reply(h_->c().HostAction(root, "h1", "close")).status, 200);
  ASSERT_EQ(Reply(h_->c().HostAction(root, "h2", "close")).status, 200);
  ASSERT_EQ(Reply(h_->c().HostAction(root, "h2", "open")).status, 200);
  Restart();
  RegisterBoth();
  std::map<std::string, json> queues;
  for (const json& q : Reply(h_->c().Queues()).body) queues[q["name"]] = q;
  EXPECT_EQ(queues["normal"]["open"], false);
  EXPECT_EQ(queues["bf"]["active"], false);
  EXPECT_EQ(queues["bf"]["open"], true);
  EXPECT_EQ(queues["strict"]["open"], true);
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "alice"}, {{"command", "x"}})).status, 400);
  json hosts = Reply(h_->c().Hosts()).body;
  EXPECT_EQ(hosts[0]["state"], "closed");
  EXPECT_EQ(hosts[1]["state"], "ok");
  // Undone, and that too survives.
  ASSERT_EQ(Reply(h_->c().QueueAction(root, "normal", "open")).status, 200);
  ASSERT_EQ(Reply(h_->c().HostAction(root, "h1", "open")).status, 200);
  Restart();
  RegisterBoth();
  EXPECT_EQ(Reply(h_->c().Hosts()).body[0]["state"], "ok");
  EXPECT_EQ(h_->Submit("alice", {{"command", "x"}, {"queue", "normal"}}) > 0, true);
}

// Closing a host or a queue only keeps new work off: a restart restores the jobs running
// there on their hosts (they were requeued, their allocations checked against the closed
// states before the overrides were even known to be a restart's).
TEST_F(ControllerTest, JobsOfAClosedHostRunOnThroughARestart) {
  RegisterBoth();
  const JobId a = h_->Submit("alice", {{"command", "a"}, {"tasks", 4}});
  h_->Cycle();
  const std::string host = h_->Job(a)["hosts"][0]["name"];
  ASSERT_EQ(LaunchedIds(h_->Heartbeat(host)), std::vector<JobId>({a}));
  h_->Heartbeat(host, {a});
  ASSERT_EQ(h_->State(a), "RUNNING");
  const Caller root{.user = "root", .admin = true};
  ASSERT_EQ(Reply(h_->c().HostAction(root, host, "close")).status, 200);
  ASSERT_EQ(Reply(h_->c().QueueAction(root, "bf", "close")).status, 200);
  Restart();
  EXPECT_EQ(h_->State(a), "RUNNING") << h_->log();
  ASSERT_EQ(h_->Register(host, {a}).status, 200);
  EXPECT_EQ(h_->State(a), "RUNNING");
  EXPECT_TRUE(KilledIds(h_->Heartbeat(host, {a})).empty());
  for (const json& h : Reply(h_->c().Hosts()).body) {
    if (h["name"] == host) {
      EXPECT_EQ(h["state"], "closed");
    }
  }
}

// R-SRV-6: a job blocked for many cycles logs one line per change of its main reason.
TEST_F(ControllerTest, PendingReasonsAreLoggedOnlyWhenTheyChange) {
  RegisterBoth();
  const JobId big = h_->Submit("alice", {{"command", "x"}, {"tasks", 8}});
  const JobId blocked = h_->Submit("alice", {{"command", "y"}, {"tasks", 8}});
  for (int i = 0; i < 20; ++i) {
    h_->Submit("bob", {{"command", "z"}, {"queue", "strict"}, {"hold", true}});  // events
    h_->Cycle();
  }
  const std::string needle = "job " + std::to_string(blocked) + ": pending:";
  const std::string log = h_->log();
  size_t count = 0;
  for (size_t pos = log.find(needle); pos != std::string::npos; pos = log.find(needle, pos + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << log;
  EXPECT_EQ(h_->State(big), "ADMITTING");
  EXPECT_EQ(h_->Job(blocked)["reason"], "NO_RESOURCE");
}

TEST_F(ControllerTest, JobDetailShowsReasonsAndAdmissionDiagnostics) {
  RegisterBoth();
  const JobId big = h_->Submit("alice", {{"command", "x"}, {"tasks", 6}, {"queue", "bf"}});
  const JobId head = h_->Submit("alice", {{"command", "x"}, {"tasks", 8}, {"queue", "bf"}});
  const JobId small = h_->Submit("alice", {{"command", "x"}, {"tasks", 1}, {"queue", "bf"}});
  h_->Cycle();
  EXPECT_EQ(h_->State(big), "ADMITTING");
  EXPECT_EQ(h_->State(small), "ADMITTING");  // backfilled past the blocked head
  json job = h_->Job(head);
  EXPECT_EQ(job["reasons"]["main"], "NO_RESOURCE");
  EXPECT_FALSE(job["reasons"]["details"].empty());
  const json& adm = job["admission"];
  EXPECT_EQ(adm["policy"], "bounded_backfill");
  EXPECT_EQ(adm["bypass_count"], 1);
  EXPECT_FALSE(adm["first_blocked"].is_null());
  EXPECT_EQ(adm["requested_slots"], 8);
  EXPECT_EQ(adm["eligible_slots"], 8);
  EXPECT_EQ(adm["gate"], "counting");
  // R-ADM-3: the head's bypass count, first-blocked time and gate survive a restart.
  const json before = adm;
  Restart();
  json after = h_->Job(head)["admission"];
  EXPECT_EQ(after["bypass_count"], before["bypass_count"]);
  EXPECT_EQ(after["first_blocked"], before["first_blocked"]);
  EXPECT_EQ(after["gate_since"], before["gate_since"]);
  EXPECT_EQ(after["seq"], before["seq"]);
}

}  // namespace
}  // namespace sluice::server
