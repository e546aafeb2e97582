// The SQLite store's history indexes (store/sqlite_history.cc, issue 21): partial on
// phase = 'ENDED', so only a job's last write touches them; an older database's full
// indexes are replaced at open, and history queries still find ended jobs through them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <set>
#include <string>

#include "store/history.h"
#include "store/store.h"
#include "testing/subprocess.h"

namespace sluice::store {
namespace {

using testing::TempDir;

// name -> its CREATE statement, for the jobs table's indexes in DIR/sluice.db.
std::map<std::string, std::string> JobIndexes(const TempDir& dir) {
  std::map<std::string, std::string> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open((dir.path() / "sluice.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND "
                               "tbl_name = 'jobs' AND sql IS NOT NULL",
                               -1, &s, nullptr),
            SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) {
    out[reinterpret_cast<const char*>(sqlite3_column_text(s, 0))] =
        reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

StoredJob Row(JobId id, const std::string& state, const std::string& phase, int64_t end) {
  return StoredJob{.id = id,
                   .spec = R"({"command":"true","user":"alice","queue":"normal"})",
                   .state = state,
                   .seq = static_cast<uint64_t>(id),
                   .submit_time = 100,
                   .end_time = end,
                   .phase = phase,
                   .enqueue_time = 100,
                   .policy = "fifo",
                   .epoch = 1};
}

TEST(HistoryIndexTest, AnOlderDatabasesFullIndexesBecomePartial) {
  TempDir dir;
  { ASSERT_TRUE(Store::Open(dir.path().string())); }
  {  // as an older release left it: the same indexes without the WHERE
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir.path() / "sluice.db").c_str(), &db), SQLITE_OK);
    const char* old = R"sql(
      DROP INDEX jobs_ended_user; DROP INDEX jobs_ended_queue;
      DROP INDEX jobs_ended_state; DROP INDEX jobs_ended_end;
      CREATE INDEX jobs_history_user ON jobs (json_extract(spec, '$.user'), end_time);
      CREATE INDEX jobs_history_state ON jobs (state, end_time);
    )sql";
    ASSERT_EQ(sqlite3_exec(db, old, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  { ASSERT_TRUE(Store::Open(dir.path().string())); }
  const auto indexes = JobIndexes(dir);
  std::set<std::string> names;
  for (const auto& [name, sql] : indexes) {
    names.insert(name);
    EXPECT_NE(sql.find("WHERE phase = 'ENDED'"), std::string::npos) << sql;
  }
  EXPECT_EQ(names, (std::set<std::string>{"jobs_ended_end", "jobs_ended_queue", "jobs_ended_state",
                                          "jobs_ended_user"}));
}

TEST(HistoryIndexTest, OnlyEndedRowsAreFoundByUserAndQueue) {
  TempDir dir;
  auto store = Store::Open(dir.path().string());
  ASSERT_TRUE(store) << store.error().ToString();
  // Job 2 is written as each of its states in turn; job 1 stays running.
  ASSERT_TRUE((*store)
                  ->WriteSync(WriteBatch{
                      .jobs = {Row(1, "RUNNING", "ADMITTED", 0), Row(2, "PENDING", "PENDING", 0)}})
                  .ok());
  ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {Row(2, "RUNNING", "ADMITTED", 0)}}).ok());
  ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {Row(2, "DONE", "ENDED", 200)}}).ok());
  HistoryQuery by_user{.user = "alice"};
  auto page = (*store)->QueryHistory(by_user);
  ASSERT_TRUE(page) << page.error().ToString();
  ASSERT_EQ(page->records.size(), 1u);
  EXPECT_EQ(page->records[0].row.id, 2);
  HistoryQuery by_queue{.queues = {"normal"}, .states = {"DONE"}};
  page = (*store)->QueryHistory(by_queue);
  ASSERT_TRUE(page) << page.error().ToString();
  ASSERT_EQ(page->records.size(), 1u);
  EXPECT_EQ(page->records[0].row.id, 2);
}

}  // namespace
}  // namespace sluice::store
