// Advance reservations in the controller (issue 42, R-RSV-1, R-RSV-2; advance_reservations.h):
// create, modify, delete and their refusals, the running jobs in a reservation's way, the hosts
// a slots reservation picks, the users' policy, who may submit into one, a job ended with its
// window, the preview, and a restart.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::LaunchedIds;

const Caller kAdmin{.user = "root", .admin = true};
const Caller kAlice{.user = "alice"};
const Caller kBob{.user = "bob"};

class AdvanceReservationsTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(testing::TestAuth()); }

  void Open(config::AuthConfig auth) {
    h_ = std::make_unique<ControllerHarness>(dir_.path().string());
    h_->Open(testing::TestCluster(), std::move(auth));
    ASSERT_EQ(h_->Register("h1").status, 200);
    ASSERT_EQ(h_->Register("h2").status, 200);
  }

  Instant Now() const { return h_->now_ms() / 1000; }

  Reply Create(const Caller& caller, json body) { return h_->c().CreateReservation(caller, body); }

  // `body` as `user`; each host reports what it launched as running. Returns the job's id.
  JobId SubmitAndRun(const std::string& user, json body) {
    const JobId id = h_->Submit(user, std::move(body));
    h_->Cycle();
    for (const char* host : {"h1", "h2"}) {
      for (JobId launched : LaunchedIds(h_->Heartbeat(host))) running_[host].push_back(launched);
      h_->Heartbeat(host, running_[host]);
    }
    return id;
  }

  std::vector<JobId> Ids(const json& list) {
    std::vector<JobId> ids;
    for (const json& j : list) ids.push_back(j["id"].get<JobId>());
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  TempDir dir_;
  std::unique_ptr<ControllerHarness> h_;
  std::map<std::string, json> running_{{"h1", json::array()}, {"h2", json::array()}};
};

TEST_F(AdvanceReservationsTest, CreateListShowModifyDelete) {
  const Instant t = Now() + 100;
  Reply r = Create(kAdmin, {{"name", "course"},
                            {"hosts", {"h1"}},
                            {"begin", t},
                            {"duration", 3600},
                            {"users", {"alice"}},
                            {"overrun", 60}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["hosts"], json({"h1"}));
  EXPECT_EQ(r.body["end"], t + 3600);
  EXPECT_EQ(r.body["windows"], json::array({json::array({t, t + 3600})}));
  EXPECT_EQ(r.body["state"], "waiting");
  EXPECT_EQ(r.body["creator"], "root");
  EXPECT_EQ(r.body["created"], Now());
  EXPECT_EQ(r.body["slots"], nullptr);
  EXPECT_EQ(r.body["recur"], nullptr);
  ASSERT_EQ(Create(kAdmin, {{"name", "a-first"}, {"hosts", {"h2"}}, {"begin", t}, {"end", t + 10}})
                .status,
            200);
  const json list = Reply(h_->c().ListReservations()).body["reservations"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["name"], "a-first");  // name order
  EXPECT_EQ(list[0]["users"], json({"root"})) << "no users or groups: its creator";
  EXPECT_EQ(Reply(h_->c().GetReservation("course")).body["overrun"], 60);
  EXPECT_EQ(Reply(h_->c().GetReservation("nope")).status, 404);
  r = h_->c().ModifyReservation(kAdmin, "course", {{"end", t + 7200}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["duration"], 7200);
  h_->Advance(200'000);  // inside the window
  EXPECT_EQ(Reply(h_->c().GetReservation("course")).body["state"], "active");
  r = h_->c().DeleteReservation(kAdmin, "course");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body, json({{"deleted", "course"}}));
  EXPECT_EQ(Reply(h_->c().GetReservation("course")).status, 404);
  EXPECT_EQ(Reply(h_->c().DeleteReservation(kAdmin, "course")).status, 404);
  EXPECT_NE(h_->log().find("reservation course: deleted by root"), std::string::npos);
}

TEST_F(AdvanceReservationsTest, BadRequestsNameTheFieldAndWhatWasExpected) {
  const Instant t = Now() + 100;
  struct Case {
    std::string_view name;
    json body;
    int status;
    std::string_view message;
  };
  const Case cases[] = {
      {"no name",
       {{"hosts", {"h1"}}, {"begin", t}, {"duration", 10}},
       400,
       "reservation.name: missing"},
      {"bad name",
       {{"name", "a b"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 10}},
       400,
       "reservation.name: expected a name"},
      {"unknown field",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t}, {"length", 10}},
       400,
       "reservation.length: unknown field"},
      {"neither hosts nor slots",
       {{"name", "x"}, {"begin", t}, {"duration", 10}},
       400,
       "reservation.hosts: expected hosts"},
      {"both",
       {{"name", "x"}, {"hosts", {"h1"}}, {"slots", 4}, {"begin", t}, {"duration", 10}},
       400,
       "reservation.slots: give hosts or slots, not both"},
      {"request without slots",
       {{"name", "x"}, {"hosts", {"h1"}}, {"request", "select[a]"}, {"begin", t}, {"duration", 10}},
       400,
       "reservation.request: only with slots"},
      {"no begin",
       {{"name", "x"}, {"hosts", {"h1"}}, {"duration", 10}},
       400,
       "reservation.begin: missing"},
      {"begin not a time",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", "noon"}, {"duration", 10}},
       400,
       "reservation.begin: expected a time (Unix seconds, an integer >= 0), got \"noon\""},
      {"end before begin",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t}, {"end", t - 1}},
       400,
       "reservation.end: expected a time after begin"},
      {"end and duration",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t}, {"end", t + 5}, {"duration", 5}},
       400,
       "reservation.duration: give end or duration, not both"},
      {"no end",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t}},
       400,
       "reservation.end: expected end (a time) or duration (seconds), got neither"},
      {"unknown host",
       {{"name", "x"}, {"hosts", {"h9"}}, {"begin", t}, {"duration", 10}},
       400,
       "reservation.hosts: no host named 'h9'"},
      {"users not a list",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 10}, {"users", "alice"}},
       400,
       "reservation.users: expected a list of user names"},
      {"maint not a flag",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 10}, {"maint", 1}},
       400,
       "reservation.maint: expected true or false"},
      {"negative overrun",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 10}, {"overrun", -1}},
       400,
       "reservation.overrun: expected a duration in seconds >= 0"},
      {"past",
       {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t - 1000}, {"duration", 10}},
       400,
       "is in the past"},
      {"recur without duration",
       {{"name", "x"},
        {"hosts", {"h1"}},
        {"begin", t},
        {"end", t + 10},
        {"recur", {{"cron", "0 8 * * *"}}}},
       400,
       "reservation.duration: missing"},
      {"too few slots",
       {{"name", "x"}, {"slots", 9}, {"begin", t}, {"duration", 10}},
       409,
       "reservation.slots: 9 slots wanted"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Reply r = Create(kAdmin, c.body);
    EXPECT_EQ(r.status, c.status) << r.body.dump();
    EXPECT_NE(r.body.value("error", "").find(c.message), std::string::npos) << r.body.dump();
  }
  EXPECT_TRUE(Reply(h_->c().ListReservations()).body["reservations"].empty()) << "none made";
  ASSERT_EQ(
      Create(kAdmin, {{"name", "x"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 10}}).status,
      200);
  const Reply again =
      Create(kAdmin, {{"name", "x"}, {"hosts", {"h2"}}, {"begin", t}, {"duration", 10}});
  EXPECT_EQ(again.status, 409);
  EXPECT_NE(again.body.value("error", "").find("reservation x exists"), std::string::npos);
  const Reply rename = h_->c().ModifyReservation(kAdmin, "x", {{"name", "y"}});
  EXPECT_EQ(rename.status, 400);
  EXPECT_NE(rename.body.value("error", "")
                .find("reservation.name: a reservation's name cannot be changed"),
            std::string::npos);
}

TEST_F(AdvanceReservationsTest, ARecurringReservationHasItsNextWindowsInItsTimeZone) {
  // The harness starts at 2001-09-09 01:46:40 UTC: Berlin is UTC+2 then.
  Reply r = Create(kAdmin, {{"name", "mornings"},
                            {"hosts", {"h1"}},
                            {"begin", Now()},
                            {"duration", 3600},
                            {"recur", {{"cron", "0 8 * * *"}, {"tz", "Europe/Berlin"}}}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const json windows = r.body["windows"];
  ASSERT_GE(windows.size(), 7u) << windows.dump();
  EXPECT_LE(windows.size(), 10u);
  for (const json& w : windows) {
    EXPECT_EQ(w[0].get<Instant>() % 86400, 6 * 3600) << w.dump();
    EXPECT_EQ(w[1].get<Instant>() - w[0].get<Instant>(), 3600);
  }
  EXPECT_EQ(r.body["end"], nullptr);
  EXPECT_EQ(r.body["recur"], json({{"cron", "0 8 * * *"}, {"tz", "Europe/Berlin"}}));
  // A day later the first window is past and the list moved on.
  const Instant first = windows[0][0];
  h_->Advance(86'400'000);
  h_->Cycle();
  const json later = Reply(h_->c().GetReservation("mornings")).body["windows"];
  ASSERT_FALSE(later.empty());
  EXPECT_GT(later[0][0].get<Instant>(), first);
  const Reply bad = Create(kAdmin, {{"name", "bad"},
                                    {"hosts", {"h2"}},
                                    {"begin", Now()},
                                    {"duration", 60},
                                    {"recur", {{"cron", "0 25 * * *"}}}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.value("error", "").find("reservation.recur: "), std::string::npos)
      << bad.body.dump();
}

TEST_F(AdvanceReservationsTest, TwoReservationsMayShareAHostAtOneTimeOnlyWhenOneIsMaint) {
  const Instant t = Now() + 100;
  ASSERT_EQ(
      Create(kAdmin, {{"name", "a"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 100}}).status,
      200);
  const Reply overlap = Create(
      kAdmin, {{"name", "b"}, {"hosts", {"h2", "h1"}}, {"begin", t + 50}, {"duration", 100}});
  EXPECT_EQ(overlap.status, 409);
  EXPECT_NE(overlap.body.value("error", "").find("reservation b overlaps reservation a on host h1"),
            std::string::npos)
      << overlap.body.dump();
  EXPECT_EQ(
      Create(kAdmin, {{"name", "b"}, {"hosts", {"h1"}}, {"begin", t + 100}, {"duration", 100}})
          .status,
      200)
      << "after a's window";
  EXPECT_EQ(
      Create(kAdmin,
             {{"name", "m"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 500}, {"maint", true}})
          .status,
      200);
  const Reply moved = h_->c().ModifyReservation(kAdmin, "b", {{"begin", t + 10}});
  EXPECT_EQ(moved.status, 409) << "a modify is checked as a create";
}

TEST_F(AdvanceReservationsTest, RunningJobsInTheWayRefuseItUnlessIgnoreJobs) {
  const JobId long_job =
      SubmitAndRun("alice", {{"command", "x"}, {"tasks", 4}, {"run_limit", 7200}});
  const JobId short_job = SubmitAndRun("bob", {{"command", "x"}, {"tasks", 4}, {"run_limit", 50}});
  ASSERT_EQ(h_->State(long_job), "RUNNING");
  ASSERT_EQ(h_->State(short_job), "RUNNING");
  const std::string long_host = h_->Job(long_job)["hosts"][0]["name"];
  const std::string short_host = long_host == "h1" ? "h2" : "h1";
  const Instant t = Now() + 100;
  const Reply refused = Create(
      kAdmin,
      {{"name", "fix"}, {"hosts", {"h1", "h2"}}, {"begin", t}, {"duration", 600}, {"maint", true}});
  ASSERT_EQ(refused.status, 409);
  const std::string message = refused.body.value("error", "");
  EXPECT_NE(message.find("1 running job(s) would still run when it begins"), std::string::npos)
      << message;
  EXPECT_NE(message.find("job " + std::to_string(long_job) + " of alice on " + long_host),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("job " + std::to_string(short_job)), std::string::npos)
      << "it ends by its run limit before";
  EXPECT_EQ(
      Create(kAdmin, {{"name", "fix"}, {"hosts", {short_host}}, {"begin", t}, {"duration", 600}})
          .status,
      200);
  EXPECT_EQ(Create(kAdmin, {{"name", "fix2"},
                            {"hosts", {long_host}},
                            {"begin", t},
                            {"duration", 600},
                            {"ignore_jobs", true}})
                .status,
            200);
}

TEST_F(AdvanceReservationsTest, SlotsPickWholeHostsPreferringOnesNoJobRunsInto) {
  const JobId job = SubmitAndRun("alice", {{"command", "x"}, {"tasks", 1}, {"run_limit", 7200}});
  const std::string busy = h_->Job(job)["hosts"][0]["name"];
  const std::string idle = busy == "h1" ? "h2" : "h1";
  const Instant t = Now() + 100;
  Reply r = Create(kAdmin, {{"name", "four"}, {"slots", 3}, {"begin", t}, {"duration", 600}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["hosts"], json({idle}));
  EXPECT_EQ(r.body["slots"], 3);
  r = Create(kAdmin, {{"name", "eight"}, {"slots", 8}, {"begin", t + 600}, {"duration", 600}});
  EXPECT_EQ(r.status, 409) << "the busy host's job runs into it";
  r = Create(kAdmin, {{"name", "eight"},
                      {"slots", 8},
                      {"begin", t + 600},
                      {"duration", 600},
                      {"ignore_jobs", true}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["hosts"], json({idle, busy})) << "the idle one first";
  r = Create(
      kAdmin,
      {{"name", "more"}, {"slots", 1}, {"begin", t}, {"duration", 600}, {"ignore_jobs", true}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["hosts"], json({busy})) << "the other is reserved then";
  r = Create(
      kAdmin,
      {{"name", "bad"}, {"slots", 1}, {"request", "select[("}, {"begin", t}, {"duration", 600}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.value("error", "").find("reservation.request: "), std::string::npos);
}

TEST_F(AdvanceReservationsTest, UsersReserveOnlyWithinTheClustersPolicy) {
  const Instant t = Now() + 100;
  const json mine = {{"name", "mine"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 3600}};
  Reply r = Create(kAlice, mine);
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.value("error", "").find("lets no user make reservations"), std::string::npos);
  config::AuthConfig auth = testing::TestAuth();
  auth.user_reservations = {
      .enabled = true, .max_hosts = 1, .max_duration = 7200, .users = {"alice"}};
  h_.reset();
  Open(std::move(auth));
  EXPECT_EQ(Create(kBob, mine).status, 403) << "not in the policy's users";
  r = Create(kAlice, {{"name", "two"}, {"hosts", {"h1", "h2"}}, {"begin", t}, {"duration", 60}});
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.value("error", "").find("at most 1"), std::string::npos) << r.body.dump();
  EXPECT_EQ(Create(kAlice, {{"name", "long"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 7201}})
                .status,
            403);
  EXPECT_EQ(
      Create(kAlice,
             {{"name", "m"}, {"hosts", {"h1"}}, {"begin", t}, {"duration", 60}, {"maint", true}})
          .status,
      403);
  r = Create(kAlice, mine);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["creator"], "alice");
  EXPECT_EQ(Reply(h_->c().ModifyReservation(kBob, "mine", {{"duration", 60}})).status, 403);
  EXPECT_EQ(Reply(h_->c().DeleteReservation(kBob, "mine")).status, 403);
  EXPECT_EQ(Reply(h_->c().ModifyReservation(kAlice, "mine", {{"duration", 60}})).status, 200);
  EXPECT_EQ(Reply(h_->c().DeleteReservation(kAlice, "mine")).status, 200);
}

TEST_F(AdvanceReservationsTest, OnlyItsUsersAndGroupMembersSubmitIntoAReservation) {
  const Instant t = Now() + 100;
  ASSERT_EQ(Create(kAdmin, {{"name", "course"},
                            {"hosts", {"h1"}},
                            {"begin", t},
                            {"duration", 600},
                            {"users", {"alice"}},
                            {"groups", {"daemon"}}})
                .status,
            200);
  const json job = {{"command", "x"}, {"reservation", "course"}, {"run_limit", 60}};
  const JobId id = h_->Submit("alice", job);
  EXPECT_EQ(h_->Job(id)["reservation"], "course");
  Reply r = h_->c().Submit(kBob, job);
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.value("error", "")
                .find("job.reservation: user bob may not run jobs in reservation course"),
            std::string::npos)
      << r.body.dump();
  // Groups as the controller's host resolves the account: daemon's primary group is daemon.
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "daemon"}, job)).status, 200);
  EXPECT_EQ(Reply(h_->c().Submit(Caller{.user = "nobody"}, job)).status, 403);
  r = h_->c().Submit(kAlice, {{"command", "x"}, {"reservation", "nope"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.value("error", "").find("job.reservation: no reservation named 'nope'"),
            std::string::npos);
  // A job outside reservations has no such member.
  EXPECT_FALSE(h_->Job(h_->Submit("alice", {{"command", "x"}})).contains("reservation"));
}

TEST_F(AdvanceReservationsTest, AJobInsideEndsWithItsWindowPlusTheOverrunNamingIt) {
  const Instant t = Now() + 10;
  ASSERT_EQ(Create(kAdmin, {{"name", "course"},
                            {"hosts", {"h1"}},
                            {"begin", t},
                            {"duration", 100},
                            {"users", {"alice"}},
                            {"overrun", 20}})
                .status,
            200);
  const JobId id =
      h_->Submit("alice", {{"command", "x"}, {"reservation", "course"}, {"run_limit", 1000}});
  h_->Cycle();
  EXPECT_TRUE(LaunchedIds(h_->Heartbeat("h1")).empty()) << "not open yet";
  h_->Advance(10'000);
  h_->Cycle();
  const json reply = h_->Heartbeat("h1");
  ASSERT_EQ(LaunchedIds(reply), std::vector<JobId>{id}) << reply.dump();
  EXPECT_EQ(reply["launch"][0]["run_limit"], 120) << "the window's end + overrun, from its start";
  h_->Heartbeat("h1", json::array({id}));
  ASSERT_EQ(h_->State(id), "RUNNING");
  // A longer window: the agent is told the new limit.
  ASSERT_EQ(Reply(h_->c().ModifyReservation(kAdmin, "course", {{"duration", 200}})).status, 200);
  const json orders = h_->Heartbeat("h1", json::array({id}))["run_limits"];
  ASSERT_EQ(orders.size(), 1u) << orders.dump();
  EXPECT_EQ(orders[0]["run_limit"], 220);
  h_->Advance(220'000);
  h_->Heartbeat("h1", json::array(), Exited(id, 137, "run_limit"));
  const json job = h_->Job(id);
  EXPECT_EQ(job["state"], "EXIT");
  EXPECT_EQ(job["cause"], "RUN_LIMIT");
  EXPECT_NE(job.value("message", "").find("ended at the end of reservation course's window"),
            std::string::npos)
      << job.dump();
}

TEST_F(AdvanceReservationsTest, PreviewOfAMaintReservationListsExactlyTheRunningJobsItOverlaps) {
  const JobId into = SubmitAndRun("alice", {{"command", "x"}, {"tasks", 2}, {"run_limit", 7200}});
  const JobId before = SubmitAndRun("bob", {{"command", "x"}, {"tasks", 2}, {"run_limit", 50}});
  const JobId forever = SubmitAndRun("bob", {{"command", "x"}, {"tasks", 2}});
  ASSERT_EQ(h_->State(forever), "RUNNING");
  ASSERT_EQ(h_->State(before), "RUNNING");
  const Reply r = h_->c().PreviewReservation(
      kAdmin,
      {{"hosts", {"h1", "h2"}}, {"begin", Now() + 100}, {"duration", 600}, {"maint", true}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(Ids(r.body["running"]), (std::vector<JobId>{into, forever}));
  for (const json& job : r.body["running"]) {
    if (job["id"] == forever) {
      EXPECT_EQ(job["end"], nullptr);
    }
    if (job["id"] == into) {
      EXPECT_EQ(job["end"], h_->Job(into)["start_time"].get<Instant>() + 7200);
    }
  }
  EXPECT_TRUE(Reply(h_->c().ListReservations()).body["reservations"].empty()) << "nothing stored";
}

TEST_F(AdvanceReservationsTest, PreviewListsThePendingJobsItWouldDelay) {
  const JobId a = SubmitAndRun("alice", {{"command", "x"}, {"tasks", 4}, {"run_limit", 1000}});
  const JobId b = SubmitAndRun("alice", {{"command", "x"}, {"tasks", 4}, {"run_limit", 1000}});
  ASSERT_EQ(h_->State(b), "RUNNING");
  const JobId waits = h_->Submit("bob", {{"command", "x"}, {"tasks", 4}, {"run_limit", 500}});
  h_->Cycle();
  const Instant t = Now();
  const Reply r = h_->c().PreviewReservation(kAdmin, {{"name", "fix"},
                                                      {"hosts", {"h1", "h2"}},
                                                      {"begin", t + 1000},
                                                      {"duration", 300},
                                                      {"maint", true}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_TRUE(r.body["running"].empty()) << "a and b end as it begins";
  ASSERT_EQ(r.body["delayed"].size(), 1u) << r.body.dump();
  const json& d = r.body["delayed"][0];
  EXPECT_EQ(d["id"], waits);
  EXPECT_EQ(d["user"], "bob");
  EXPECT_EQ(d["estimated_start"], t + 1000);
  EXPECT_EQ(d["estimated_start_with"], t + 1300);
  (void)a;
}

TEST_F(AdvanceReservationsTest, ADeletedReservationLeavesItsJobsWaitingAndSaysSo) {
  const Instant t = Now() + 100;
  ASSERT_EQ(Create(kAdmin, {{"name", "course"},
                            {"hosts", {"h1"}},
                            {"begin", t},
                            {"duration", 600},
                            {"users", {"alice"}}})
                .status,
            200);
  const JobId id =
      h_->Submit("alice", {{"command", "x"}, {"reservation", "course"}, {"run_limit", 60}});
  h_->Cycle();
  EXPECT_NE(h_->Job(id).dump().find("reservation course is closed until its window on h1 from"),
            std::string::npos)
      << h_->Job(id).dump();
  ASSERT_EQ(Reply(h_->c().DeleteReservation(kAdmin, "course")).status, 200);
  h_->Advance(200'000);
  h_->Cycle();
  EXPECT_EQ(h_->State(id), "PENDING");
  EXPECT_NE(h_->Job(id).dump().find("reservation course (deleted)"), std::string::npos)
      << h_->Job(id).dump();
}

TEST_F(AdvanceReservationsTest, HostsShowTheirReservationsAndARestartKeepsThem) {
  const Instant t = Now() + 100;
  ASSERT_EQ(Create(kAdmin, {{"name", "course"},
                            {"hosts", {"h1"}},
                            {"begin", t},
                            {"duration", 600},
                            {"users", {"alice"}}})
                .status,
            200);
  const json hosts = Reply(h_->c().Hosts()).body;
  for (const json& host : hosts) {
    const json want = host["name"] == "h1"
                          ? json::array({{{"name", "course"}, {"begin", t}, {"end", t + 600}}})
                          : json::array();
    EXPECT_EQ(host["reservations"], want) << host.dump();
  }
  h_->Close();
  h_->Open();
  const Reply r = h_->c().GetReservation("course");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["users"], json({"alice"}));
  EXPECT_EQ(h_->c().Submit(kAlice, {{"command", "x"}, {"reservation", "course"}}).ok(), true)
      << "the core knows it again";
}

}  // namespace
}  // namespace sluice::server
