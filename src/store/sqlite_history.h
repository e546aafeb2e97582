// SqliteHistory: the SQLite store's history reader and purger (store/history.h, R-UX-6).
//
// Representation: its own connection to DIR/sluice.db (WAL: it reads while the writer
// thread commits, and never blocks it for longer than one purge chunk), and the indexes
// CreateHistoryIndexes adds to the jobs table: (user, end_time), (queue, end_time),
// (state, end_time) and (end_time), where user and queue are the spec's JSON members
// (expression indexes: the rows need no extra columns), each partial on phase = 'ENDED'
// (only a job's last write touches them; every query here spells that term).
// Purges are fenced as writes are: each chunk's transaction first checks the stored epoch.
// Thread-safety: every method from any thread (one mutex serialises the connection).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "store/history.h"

struct sqlite3;

namespace sluice::store {

// Adds the history indexes to `db` when missing (at Open; creating them on a large older
// database takes a few seconds once).
Status CreateHistoryIndexes(sqlite3* db);

class SqliteHistory {
 public:
  // Opens a second connection to `db_path` for a store writing under `epoch`.
  // Errors: kInternal with SQLite's message.
  static Result<std::unique_ptr<SqliteHistory>> Open(const std::string& db_path, uint64_t epoch);
  ~SqliteHistory();
  SqliteHistory(const SqliteHistory&) = delete;
  SqliteHistory& operator=(const SqliteHistory&) = delete;

  Result<HistoryPage> Query(const HistoryQuery& query);
  // Deletes at most `max_rows` ended rows with end_time < `ended_before` in one transaction.
  // Errors: kFailedPrecondition when the stored epoch is not this store's; kInternal.
  Result<int64_t> Purge(int64_t ended_before, int64_t max_rows);

 private:
  SqliteHistory(sqlite3* db, uint64_t epoch) : db_(db), epoch_(epoch) {}
  // Which accounting columns (and `steps`) the jobs table has (added by a later schema).
  void ReadAccountingColumns();

  Mutex mu_{LockRank::kHistoryReader};
  sqlite3* db_;
  uint64_t epoch_;
  bool has_cpu_ = false;
  bool has_rss_ = false;
  bool has_message_ = false;
  bool has_steps_ = false;
  bool has_events_ = false;
};

}  // namespace sluice::store
