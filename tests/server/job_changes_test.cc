// Modify and requeue in the controller (R-UX-7), without sockets: a queue change goes to the
// end of the new queue; a change that makes the job impossible is refused (422) and the job
// is unchanged; another user's job is refused (403); a running job's run limit is for
// administrators and goes to its agent; requeue of a running job waits for its kill and keeps
// its sequence; an ended job (also one only in the store) pends again under its id.
#include <gtest/gtest.h>

#include "server/controller.h"
#include "server/http_reply.h"
#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;
using testing::Exited;
using testing::KilledIds;
using testing::LaunchedIds;

const Caller kAlice{.user = "alice"};
const Caller kBob{.user = "bob"};
const Caller kRoot{.user = "root", .admin = true};

uint64_t Seq(ControllerHarness& h, JobId id) {
  return h.Job(id)["admission"]["seq"].get<uint64_t>();
}

TEST(JobChangesTest, AQueueChangeRequeuesAtTheEndOfTheNewQueue) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const JobId moved = h.Submit("alice", {{"command", "x"}, {"queue", "normal"}});
  const JobId s1 = h.Submit("alice", {{"command", "x"}, {"queue", "strict"}});
  const JobId s2 = h.Submit("alice", {{"command", "x"}, {"queue", "strict"}});
  const uint64_t before = Seq(h, moved);
  Reply same = h.c().Modify(kAlice, moved, {{"run_limit", 60}, {"name", "renamed"}});
  ASSERT_EQ(same.status, 200) << same.body.dump();
  EXPECT_EQ(Seq(h, moved), before);  // its queue did not change: its place is kept
  EXPECT_EQ(h.Job(moved)["run_limit"], 60);
  EXPECT_EQ(h.Job(moved)["name"], "renamed");
  Reply r = h.c().Modify(kAlice, moved, {{"queue", "strict"}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(h.Job(moved)["queue"], "strict");
  EXPECT_GT(Seq(h, moved), Seq(h, s2));
  EXPECT_GT(Seq(h, s2), Seq(h, s1));
  EXPECT_NE(h.log().find("job " + std::to_string(moved) + ": modified by alice: queue"),
            std::string::npos)
      << h.log();
  // The change is stored: a restart keeps it.
  h.Close();
  h.Open();
  EXPECT_EQ(h.Job(moved)["queue"], "strict");
  EXPECT_EQ(h.Job(moved)["run_limit"], 60);
}

TEST(JobChangesTest, AChangeThatMakesTheJobImpossibleIsRefusedAndTheJobIsUnchanged) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const JobId id = h.Submit("alice", {{"command", "x"}, {"tasks", 6}});
  const json before = h.Job(id);
  // Six tasks on one host of four slots: never.
  Reply impossible = h.c().Modify(kAlice, id, {{"resreq", "span[hosts=1]"}});
  EXPECT_EQ(impossible.status, 422) << impossible.body.dump();
  EXPECT_TRUE(impossible.body["cause"].is_string());
  Reply too_wide = h.c().Modify(kAlice, id, {{"tasks", 100}});
  EXPECT_EQ(too_wide.status, 422) << too_wide.body.dump();
  EXPECT_EQ(Reply(h.c().Modify(kAlice, id, {{"resreq", "span[ptile="}})).status, 400);
  EXPECT_EQ(Reply(h.c().Modify(kAlice, id, {{"run_limit", "x"}})).status, 400);
  EXPECT_EQ(Reply(h.c().Modify(kAlice, id, {{"command", "y"}})).status, 400);
  EXPECT_EQ(Reply(h.c().Modify(kAlice, id, json::object())).status, 400);
  EXPECT_EQ(Reply(h.c().Modify(kAlice, id, {{"queue", "nowhere"}})).status, 400);
  EXPECT_EQ(Reply(h.c().Modify(kAlice, id, {{"depend", "done(999)"}})).status, 400);
  json after = h.Job(id);
  EXPECT_EQ(after["resreq"], before["resreq"]);
  EXPECT_EQ(after["min_tasks"], 6);
  EXPECT_EQ(after["admission"]["seq"], before["admission"]["seq"]);
}

TEST(JobChangesTest, AnotherUsersJobIsRefused) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const JobId id = h.Submit("alice", {{"command", "x"}});
  EXPECT_EQ(Reply(h.c().Modify(kBob, id, {{"priority", 5}})).status, 403);
  EXPECT_EQ(Reply(h.c().Requeue(kBob, id)).status, 403);
  EXPECT_EQ(Reply(h.c().Modify(kRoot, id, {{"priority", 5}})).status, 200);
  EXPECT_EQ(Reply(h.c().Modify(kAlice, 999, {{"priority", 5}})).status, 404);
}

TEST(JobChangesTest, ARunningJobsRunLimitIsForAdministratorsAndGoesToItsAgent) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId id = h.Submit("alice", {{"command", "x"}, {"run_limit", 60}});
  h.Cycle();
  ASSERT_EQ(LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{id});
  h.Heartbeat("h1", {id});
  ASSERT_EQ(h.State(id), "RUNNING");
  EXPECT_EQ(Reply(h.c().Modify(kAlice, id, {{"run_limit", 600}})).status, 403);
  EXPECT_EQ(Reply(h.c().Modify(kRoot, id, {{"name", "x"}})).status, 409);
  ASSERT_EQ(Reply(h.c().Modify(kRoot, id, {{"run_limit", 600}})).status, 200);
  EXPECT_EQ(h.Job(id)["run_limit"], 600);
  const json reply = h.Heartbeat("h1", {id});
  ASSERT_EQ(reply["run_limits"].size(), 1u) << reply.dump();
  EXPECT_EQ(reply["run_limits"][0], json::parse(R"({"job": 1, "run_limit": 600})"));
  EXPECT_TRUE(h.Heartbeat("h1", {id})["run_limits"].empty());  // sent once
}

TEST(JobChangesTest, RequeueKillsARunningJobAndKeepsItsPlace) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  const JobId first = h.Submit("alice", {{"command", "x"}, {"tasks", 8}});
  h.Cycle();
  ASSERT_EQ(LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{first});
  h.Heartbeat("h1", {first});
  const JobId later = h.Submit("alice", {{"command", "y"}, {"tasks", 8}});
  const uint64_t seq = Seq(h, first);
  EXPECT_EQ(Reply(h.c().Requeue(kAlice, later)).status, 409);  // pending: nothing to requeue
  ASSERT_EQ(Reply(h.c().Requeue(kAlice, first)).status, 200);
  EXPECT_EQ(KilledIds(h.Heartbeat("h1", {first})), std::vector<JobId>{first});
  h.Heartbeat("h1", json::array(), Exited(first, 143, "killed"));
  EXPECT_EQ(h.State(first), "PENDING");
  EXPECT_EQ(Seq(h, first), seq);
  h.Cycle();
  EXPECT_EQ(h.State(first), "ADMITTING");  // ahead of the later submission
  EXPECT_EQ(h.State(later), "PENDING");
}

TEST(JobChangesTest, AnEndedJobPendsAgainUnderItsIdAlsoFromTheStore) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId id = h.Submit("alice", {{"command", "x"}});
  h.Cycle();
  ASSERT_EQ(LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{id});
  h.Heartbeat("h1", json::array(), Exited(id, 2));
  ASSERT_EQ(h.State(id), "EXIT");
  const uint64_t seq = h.Job(id).contains("admission") ? Seq(h, id) : 0;
  Reply r = h.c().Requeue(kAlice, id);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(h.State(id), "PENDING");
  EXPECT_TRUE(h.Job(id)["exit_code"].is_null());
  EXPECT_EQ(Seq(h, id), seq);
  h.Cycle();
  ASSERT_EQ(LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{id});
  h.Heartbeat("h1", json::array(), Exited(id, 0));
  ASSERT_EQ(h.State(id), "DONE");
  // Past the retention and a restart: read back from the store.
  h.Advance(2 * 3'600'000);
  h.Cycle();
  h.Close();
  h.Open();
  ASSERT_EQ(Reply(h.c().GetJob(id)).status, 404);
  ASSERT_EQ(Reply(h.c().Requeue(kAlice, id)).status, 200);
  EXPECT_EQ(h.State(id), "PENDING");
  EXPECT_EQ(Reply(h.c().Requeue(kAlice, 999)).status, 404);
}

}  // namespace
}  // namespace sluice::server

namespace sluice::server {
namespace {

// Issue 48: `PATCH done(self)` or two jobs made to wait for each other waited forever.
TEST(JobChangesTest, ADependencyCycleIsRefusedNamingIt) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const JobId first = h.Submit("alice", {{"command", "x"}, {"hold", true}});
  const JobId second =
      h.Submit("alice", {{"command", "x"}, {"depend", "done(" + std::to_string(first) + ")"}});
  Reply self = h.c().Modify(kAlice, first, {{"depend", "done(" + std::to_string(first) + ")"}});
  EXPECT_EQ(self.status, 400) << self.body.dump();
  EXPECT_NE(self.body.dump().find(std::to_string(first) + " -> " + std::to_string(first)),
            std::string::npos)
      << self.body.dump();
  Reply pair = h.c().Modify(kAlice, first, {{"depend", "done(" + std::to_string(second) + ")"}});
  EXPECT_EQ(pair.status, 400) << pair.body.dump();
  EXPECT_NE(pair.body.dump().find(std::to_string(first) + " -> " + std::to_string(second) +
                                  " -> " + std::to_string(first)),
            std::string::npos)
      << pair.body.dump();
  EXPECT_EQ(h.Job(first)["depend"], "");
}

}  // namespace
}  // namespace sluice::server
