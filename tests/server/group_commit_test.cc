// Group commit of single submissions (R-SRV-1; issue 21, the submit loop): submissions that
// arrive together share commits, each is acknowledged only once its commit is done (another
// connection to the database already sees it when the reply comes), and every acknowledged
// one is there after a crash.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using ::sluice::testing::TempDir;
using testing::ControllerHarness;

TEST(GroupCommitTest, ConcurrentSubmissionsShareCommitsAndSurviveACrash) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const int64_t commits_before = h.store().stats().transactions;
  constexpr int kThreads = 8;
  constexpr int kEach = 25;
  std::mutex mu;
  std::set<JobId> acknowledged;
  std::atomic<int> refused = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        Reply r = h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"hold", true}});
        if (r.status != 200) {
          ++refused;
          continue;
        }
        std::lock_guard lock(mu);
        acknowledged.insert(r.body["id"].get<JobId>());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(refused, 0);
  ASSERT_EQ(acknowledged.size(), static_cast<size_t>(kThreads * kEach));
  const int64_t commits = h.store().stats().transactions - commits_before;
  EXPECT_LT(commits, kThreads * kEach) << "every submission had a commit of its own";

  h.Close();  // as a crash leaves it: only what was committed stays
  h.Open();
  for (JobId id : acknowledged) {
    EXPECT_EQ(h.State(id), "HELD") << "acknowledged job " << id << " lost";
  }
}

// A submission commits on the request's own thread (store.h, CommitOnCaller), and the reply
// comes only after that commit: another connection, as another process would, reads the job's
// row the moment Submit returns.
TEST(GroupCommitTest, TheReplyComesOnlyAfterTheCommit) {
  TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  const int64_t caller_commits = h.store().stats().caller_commits;
  for (int i = 0; i < 20; ++i) {
    Reply r = h.c().Submit(Caller{.user = "alice"}, {{"command", "true"}, {"hold", true}});
    ASSERT_EQ(r.status, 200) << r.body.dump();
    const JobId id = r.body["id"].get<JobId>();
    sqlite3* db = nullptr;
    ASSERT_EQ(
        sqlite3_open_v2((dir.path() / "sluice.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
        SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    const std::string sql = "SELECT count(*) FROM jobs WHERE id = " + std::to_string(id);
    ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(s, 0), 1) << "job " << id << " acknowledged before its commit";
    sqlite3_finalize(s);
    sqlite3_close(db);
  }
  EXPECT_GT(h.store().stats().caller_commits, caller_commits);
}

}  // namespace
}  // namespace sluice::server
