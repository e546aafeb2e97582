// Ended jobs in the controller: dependencies on a job that ended before a restart keep its
// verdict (the core restores only jobs that had not ended), and ended jobs leave listings
// keep_ended_seconds after their end (LSF's CLEAN_PERIOD) while staying in the store.
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
using testing::LaunchedIds;

bool Listed(ControllerHarness& h, JobId id) {
  for (const json& job : Reply(h.c().ListJobs({})).Json()) {
    if (job["id"] == id) return true;
  }
  return false;
}

TEST(EndedJobsTest, ADependencyOnAJobThatEndedBeforeARestartKeepsItsVerdict) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId a = h.Submit("alice", {{"command", "a"}});
  const JobId b = h.Submit(
      "alice", {{"command", "b"}, {"depend", "done(" + std::to_string(a) + ")"}, {"hold", true}});
  h.Cycle();
  ASSERT_EQ(LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{a});
  h.Heartbeat("h1", {a});
  h.Heartbeat("h1", json::array(), Exited(a, 0));
  ASSERT_EQ(h.State(a), "DONE");

  h.Close();
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  EXPECT_EQ(h.State(a), "DONE");
  // The held dependent, released after the restart, starts: done(a) holds.
  EXPECT_EQ(Reply(h.c().Hold(Caller{.user = "alice"}, b, false)).status, 200);
  // A new submission may name the ended job.
  const JobId c =
      h.Submit("alice", {{"command", "c"}, {"depend", "ended(" + std::to_string(a) + ")"}});
  h.Cycle();
  EXPECT_EQ(h.State(b), "ADMITTING") << h.Job(b).dump();
  EXPECT_EQ(h.State(c), "ADMITTING") << h.Job(c).dump();
}

TEST(EndedJobsTest, StartedStaysTrueAcrossARestartForAJobRequeuedThenCancelled) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId a = h.Submit("alice", {{"command", "a"}});
  h.Cycle();
  ASSERT_EQ(LaunchedIds(h.Heartbeat("h1")), std::vector<JobId>{a});
  json failed = json::array({{{"job", a}, {"message", "cwd: no such directory"}}});
  h.Heartbeat("h1", json::array(), json::array(), failed);  // re-pended: start time cleared
  ASSERT_EQ(h.State(a), "PENDING");
  ASSERT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, a)).status, 200);
  const json depend = {{"command", "d"}, {"depend", "started(" + std::to_string(a) + ")"}};
  const JobId before = h.Submit("alice", depend);
  h.Cycle();
  const std::string verdict_before = h.State(before);
  EXPECT_EQ(verdict_before, "ADMITTING") << h.Job(before).dump();

  h.Close();
  h.Open();
  ASSERT_EQ(h.Register("h1", json::array({before})).status, 200);
  const JobId after = h.Submit("alice", depend);
  h.Cycle();
  EXPECT_EQ(h.State(after), verdict_before) << h.Job(after).dump();
}

TEST(EndedJobsTest, EndedJobsLeaveListingsAfterTheRetentionAndDependenciesStillSeeThem) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const JobId old_job = h.Submit("alice", {{"command", "x"}});
  EXPECT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, old_job)).status, 200);
  h.Advance(3'599'000);
  h.Cycle();
  EXPECT_TRUE(Listed(h, old_job));
  const JobId recent = h.Submit("alice", {{"command", "y"}});
  EXPECT_EQ(Reply(h.c().Cancel(Caller{.user = "alice"}, recent)).status, 200);
  h.Advance(2'000);  // old_job ended 3,601 s ago, recent 2 s ago
  h.Cycle();
  EXPECT_FALSE(Listed(h, old_job));
  EXPECT_TRUE(Listed(h, recent));
  Reply gone = h.c().GetJob(old_job);
  EXPECT_EQ(gone.status, 404);
  EXPECT_NE(gone.body["error"].get<std::string>().find("no longer kept"), std::string::npos)
      << gone.body;
  EXPECT_EQ(Reply(h.c().GetJob(9999)).body["error"], "no job 9999");

  // A restart reads the store: the old row stays there but is not listed again.
  h.Close();
  h.Open();
  EXPECT_FALSE(Listed(h, old_job));
  EXPECT_TRUE(Listed(h, recent));
  EXPECT_EQ(Reply(h.c().GetJob(old_job)).status, 404);
  ASSERT_EQ(h.Register("h1").status, 200);
  const JobId dependent =
      h.Submit("alice", {{"command", "z"},
                         {"depend", "exit(" + std::to_string(old_job) + ") && !started(" +
                                        std::to_string(old_job) + ")"}});
  h.Cycle();
  EXPECT_EQ(h.State(dependent), "ADMITTING") << h.Job(dependent).dump();
  // Ids are never reused.
  EXPECT_GT(dependent, recent);
}

}  // namespace
}  // namespace sluice::server
