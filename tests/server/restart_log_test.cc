// The log across a restart (R-SRV-6, issue 45): the controller does not store the main reason
// it last logged for each waiting job, so after a restart the first explanation of a restored
// job is not a change worth a line of its own; one summary line counts them by reason (a
// million restored jobs logged a million lines, 13 % of the restart's CPU). Jobs submitted
// after the restart, and later changes of restored jobs, log their lines as before.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "server/controller_fixture.h"
#include "server/http_reply.h"
#include "testing/state_database.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using ::sluice::testing::TempDir;
using testing::ControllerHarness;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(RestartLogTest, RestoredWaitingJobsAreSummedUpInOneLine) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  // No agent: the jobs wait (their hosts are unavailable).
  std::vector<JobId> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(h.Submit("alice", {{"command", "x"}}));
  h.Cycle();
  // The first waits for its hosts, the others behind it: by reason, in the line's order.
  std::map<std::string, int> by_reason;
  std::map<JobId, std::string> reason_of;
  for (JobId id : ids) {
    reason_of[id] = h.Job(id)["reason"].get<std::string>();
    ASSERT_NE(reason_of[id], "NEW_JOB");
    ++by_reason[reason_of[id]];
  }
  std::string summary;
  for (const auto& [reason, n] : by_reason)
    summary += (summary.empty() ? "" : ", ") + reason + " " + std::to_string(n);
  EXPECT_EQ(Count(h.log(), ": pending: "), 3u) << h.log();

  h.Close();
  const size_t before = h.log().size();
  h.Open();
  h.Cycle();
  std::string after = h.log().substr(before);
  EXPECT_EQ(Count(after, ": pending: "), 0u) << after;
  EXPECT_EQ(Count(after, "restart: 3 restored waiting jobs explained: " + summary + "\n"), 1u)
      << after;
  for (JobId id : ids) EXPECT_EQ(h.Job(id)["reason"], reason_of[id]);
  const auto [kept, walked] = h.c().JobCountsKeptAndWalked();
  EXPECT_EQ(kept, walked);
  for (const auto& [reason, n] : by_reason) EXPECT_EQ(kept.by_reason.at({reason, "normal"}), n);

  // A job submitted since logs its own line, and no second summary follows.
  const JobId later = h.Submit("alice", {{"command", "x"}});
  h.Cycle();
  after = h.log().substr(before);
  EXPECT_EQ(Count(after, "job " + std::to_string(later) + ": pending: "), 1u) << after;
  EXPECT_EQ(Count(after, "restart: "), 1u) << after;
}

// A stored spec the restart cannot read (a member of another type than the submission
// wrote: an edited database, a bug) costs that job only: it is logged and left out, and
// every other job comes back (it ended the restart before, issue 45).
TEST(RestartLogTest, AStoredSpecItCannotReadIsLoggedAndSkipped) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  std::vector<JobId> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(h.Submit("alice", {{"command", "x"}}));
  h.Close();
  ::sluice::testing::ExecOnStateDatabase(
      dir.path(),
      "UPDATE jobs SET spec = json_set(spec, '$.queue', 5) WHERE id = " + std::to_string(ids[1]));

  const size_t before = h.log().size();
  h.Open();
  const std::string after = h.log().substr(before);
  EXPECT_EQ(Count(after, "job " + std::to_string(ids[1]) + ": stored spec unreadable"), 1u)
      << after;
  EXPECT_EQ(Reply(h.c().GetJob(ids[1])).status, 404);
  EXPECT_EQ(h.State(ids[0]), "PENDING");
  EXPECT_EQ(h.State(ids[2]), "PENDING");
  EXPECT_EQ(h.Submit("alice", {{"command", "x"}}), ids[2] + 1);  // no id is taken twice
}

}  // namespace
}  // namespace sluice::server
