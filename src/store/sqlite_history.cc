#include "store/sqlite_history.h"

#include <sqlite3.h>

#include <string>
#include <vector>

#include "store/sqlite_exec.h"

namespace sluice::store {
namespace {

// The expressions the indexes are built on; queries must spell them the same way.
constexpr const char* kUserExpr = "json_extract(spec, '$.user')";
constexpr const char* kQueueExpr = "json_extract(spec, '$.queue')";

// Partial indexes (`WHERE phase = 'ENDED'`, which every history query and the purge spell
// verbatim, so SQLite's planner may use them): a job's row is written about four times
// (submitted, started, running, ended) and only the last write touches them. Full indexes
// cost every write four index deletes and inserts, two of them re-parsing the spec's JSON:
// most of the store writer's CPU at scale (docs/performance.md, issue 21). The DROPs move an
// older database's full indexes to these.
constexpr const char* kIndexes = R"sql(
DROP INDEX IF EXISTS jobs_history_user;
DROP INDEX IF EXISTS jobs_history_queue;
DROP INDEX IF EXISTS jobs_history_state;
DROP INDEX IF EXISTS jobs_history_end;
CREATE INDEX IF NOT EXISTS jobs_ended_user ON jobs (json_extract(spec, '$.user'), end_time)
  WHERE phase = 'ENDED';
CREATE INDEX IF NOT EXISTS jobs_ended_queue ON jobs (json_extract(spec, '$.queue'), end_time)
  WHERE phase = 'ENDED';
CREATE INDEX IF NOT EXISTS jobs_ended_state ON jobs (state, end_time) WHERE phase = 'ENDED';
CREATE INDEX IF NOT EXISTS jobs_ended_end ON jobs (end_time) WHERE phase = 'ENDED';
)sql";

// A statement and the values to bind to it, built from a query's filters.
struct Sql {
  std::string text;
  std::vector<std::string> texts;  // bound as ?1, ?2, ... in order, then the integers
  std::vector<int64_t> integers;
};

// " IN (?,?,...)" for `values`, appended to the statement's texts.
std::string InList(const std::vector<std::string>& values, Sql& sql) {
  std::string list = " IN (";
  for (size_t i = 0; i < values.size(); ++i) {
    list += i == 0 ? "?" : ", ?";
    sql.texts.push_back(values[i]);
  }
  return list + ")";
}

Sql BuildQuery(const HistoryQuery& q, const std::string& columns) {
  Sql sql;
  // With a user or queue, their index is the selective one: `+state` keeps SQLite's planner
  // off the state index (a user's cancelled jobs of a month: 260 ms through it, 59 ms so).
  const std::string state = q.user || !q.queues.empty() ? "+state" : "state";
  std::string where = "phase = 'ENDED' AND " + state + " IN ('DONE', 'EXIT', 'CANCELLED')";
  if (q.id) where += " AND id = " + std::to_string(*q.id);
  if (q.user) {
    where += std::string(" AND ") + kUserExpr + " = ?";
    sql.texts.push_back(*q.user);
  }
  if (!q.queues.empty()) where += std::string(" AND ") + kQueueExpr + InList(q.queues, sql);
  if (!q.states.empty()) where += " AND " + state + InList(q.states, sql);
  // Integers are bound after the texts: their placeholders are numbered from there.
  const auto next = [&sql] {
    return "?" + std::to_string(sql.texts.size() + sql.integers.size() + 1);
  };
  where += " AND end_time >= " + next();
  sql.integers.push_back(q.since);
  if (q.until) {
    where += " AND end_time < " + next();
    sql.integers.push_back(*q.until);
  }
  if (q.after) {
    const std::string end = next();
    sql.integers.push_back(q.after->first);
    const std::string id = next();
    sql.integers.push_back(q.after->second);
    where += " AND (end_time, id) < (" + end + ", " + id + ")";
  }
  const std::string limit = next();
  sql.integers.push_back(q.limit + 1);
  sql.text = "SELECT " + columns + " FROM jobs WHERE " + where +
             " ORDER BY end_time DESC, id DESC LIMIT " + limit;
  return sql;
}

}  // namespace

Status CreateHistoryIndexes(sqlite3* db) { return Exec(db, kIndexes); }

Result<std::unique_ptr<SqliteHistory>> SqliteHistory::Open(const std::string& db_path,
                                                           uint64_t epoch) {
  // Read-write: it purges. It closes after the store's own (SqliteStore declares it first).
  Result<sqlite3*> db = OpenSecondConnection(db_path, SQLITE_OPEN_READWRITE, "for history");
  if (!db) return db.error();
  std::unique_ptr<SqliteHistory> history(new SqliteHistory(*db, epoch));
  history->ReadAccountingColumns();
  return history;
}

SqliteHistory::~SqliteHistory() { sqlite3_close(db_); }

void SqliteHistory::ReadAccountingColumns() {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, "PRAGMA table_info(jobs)", -1, &s, nullptr) != SQLITE_OK) return;
  while (sqlite3_step(s) == SQLITE_ROW) {
    const std::string name = Text(s, 1);
    has_cpu_ = has_cpu_ || name == "cpu_seconds";
    has_rss_ = has_rss_ || name == "max_rss_mb";
    has_message_ = has_message_ || name == "message";
    has_steps_ = has_steps_ || name == "steps";
    has_events_ = has_events_ || name == "events";
  }
  sqlite3_finalize(s);
}

Result<HistoryPage> SqliteHistory::Query(const HistoryQuery& query) {
  std::lock_guard lock(mu_);
  std::string columns =
      "id, spec, state, seq, submit_time, start_time, end_time, exit_code, cause, allocation, "
      "phase";
  columns += has_cpu_ ? ", cpu_seconds" : ", NULL";
  columns += has_rss_ ? ", max_rss_mb" : ", NULL";
  columns += has_message_ ? ", message" : ", ''";
  columns += has_steps_ ? ", steps" : ", ''";
  columns += has_events_ ? ", events" : ", ''";
  const Sql sql = BuildQuery(query, columns);
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db_, sql.text.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    return SqlError(db_, "querying history");
  }
  int at = 1;
  for (const std::string& text : sql.texts) {
    sqlite3_bind_text(s, at++, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }
  for (int64_t value : sql.integers) sqlite3_bind_int64(s, at++, value);
  HistoryPage page;
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (static_cast<int64_t>(page.records.size()) == query.limit) {
      page.more = true;
      break;
    }
    HistoryRecord r;
    r.row.id = sqlite3_column_int64(s, 0);
    r.row.spec = Text(s, 1);
    r.row.state = Text(s, 2);
    r.row.seq = static_cast<uint64_t>(sqlite3_column_int64(s, 3));
    r.row.submit_time = sqlite3_column_int64(s, 4);
    r.row.start_time = sqlite3_column_int64(s, 5);
    r.row.end_time = sqlite3_column_int64(s, 6);
    if (sqlite3_column_type(s, 7) != SQLITE_NULL) {
      r.row.exit_code = static_cast<int32_t>(sqlite3_column_int64(s, 7));
    }
    r.row.cause = Text(s, 8);
    r.row.allocation = Text(s, 9);
    r.row.phase = Text(s, 10);
    if (sqlite3_column_type(s, 11) != SQLITE_NULL) {
      r.row.cpu_seconds = sqlite3_column_double(s, 11);
    }
    if (sqlite3_column_type(s, 12) != SQLITE_NULL) {
      r.row.max_rss_mb = sqlite3_column_double(s, 12);
    }
    r.row.message = Text(s, 13);
    r.row.steps = Text(s, 14);
    r.row.events = Text(s, 15);
    page.records.push_back(std::move(r));
  }
  const bool failed = rc != SQLITE_ROW && rc != SQLITE_DONE;
  sqlite3_finalize(s);
  if (failed) return SqlError(db_, "reading history");
  return page;
}

Result<int64_t> SqliteHistory::Purge(int64_t ended_before, int64_t max_rows) {
  std::lock_guard lock(mu_);
  SLUICE_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
  auto run = [&]() -> Result<int64_t> {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key = 'epoch'", -1, &s, nullptr) !=
        SQLITE_OK) {
      return SqlError(db_, "reading the epoch");
    }
    const bool found = sqlite3_step(s) == SQLITE_ROW;
    const uint64_t stored = found ? static_cast<uint64_t>(sqlite3_column_int64(s, 0)) : 0;
    sqlite3_finalize(s);
    if (stored != epoch_) {
      return FailedPrecondition("epoch " + std::to_string(epoch_) + " is fenced (stored " +
                                std::to_string(stored) + ")");
    }
    const char* kDelete =
        "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE end_time < ?1 AND end_time > 0 "
        "AND phase = 'ENDED' ORDER BY end_time LIMIT ?2)";
    if (sqlite3_prepare_v2(db_, kDelete, -1, &s, nullptr) != SQLITE_OK) {
      return SqlError(db_, "purging history");
    }
    sqlite3_bind_int64(s, 1, ended_before);
    sqlite3_bind_int64(s, 2, max_rows);
    const int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return SqlError(db_, "purging history");
    return static_cast<int64_t>(sqlite3_changes(db_));
  };
  Result<int64_t> deleted = run();
  if (!deleted) {
    (void)Exec(db_, "ROLLBACK");
    return deleted;
  }
  SLUICE_RETURN_IF_ERROR(Exec(db_, "COMMIT"));
  return deleted;
}

}  // namespace sluice::store
