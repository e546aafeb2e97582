#include "store/sqlite_schema.h"

#include <sqlite3.h>

#include <optional>

#include "store/sqlite_exec.h"

namespace sluice::store {
namespace {

// One step of the layout: from `to - 1` to `to`.
struct SqliteMigration {
  int to;
  Status (*apply)(sqlite3* db);
};

// In version order; the last one's `to` is kSchemaVersion.
constexpr SqliteMigration kMigrations[] = {
    // 1 -> 2: the layout did not change; the step only records the version (the first mark).
    // The columns and indexes added before versions were recorded are added at every open
    // (AddMissingColumns, CreateHistoryIndexes), so any older database reaches schema 1 first.
    {2, [](sqlite3*) { return Status::Ok(); }},
    // 2 -> 3: advance reservations (issue 42). Open's kSchema creates the table already (it
    // runs before the migrations); the step creates it too so that it stands on its own.
    {3,
     [](sqlite3* db) {
       return Exec(db,
                   "CREATE TABLE IF NOT EXISTS reservations (name TEXT PRIMARY KEY, spec TEXT NOT "
                   "NULL)");
     }},
};
static_assert(std::size(kMigrations) > 0 &&
              kMigrations[std::size(kMigrations) - 1].to == kSchemaVersion);

Result<bool> HasTable(sqlite3* db, const char* name) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1,
                         &s, nullptr) != SQLITE_OK) {
    return SqlError(db, "reading the tables");
  }
  sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
  const int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqlError(db, "reading the tables");
  return rc == SQLITE_ROW;
}

// The `meta` row `schema_version`: nullopt when absent. REQUIRES: the table exists.
Result<std::optional<int64_t>> ReadMark(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &s,
                         nullptr) != SQLITE_OK) {
    return SqlError(db, "reading the schema version");
  }
  std::optional<int64_t> mark;
  const int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_INTEGER) {
    mark = sqlite3_column_int64(s, 0);
  } else if (rc == SQLITE_ROW) {
    mark = -1;  // not an integer: refused below
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqlError(db, "reading the schema version");
  return mark;
}

Status Stamp(sqlite3* db, int version) {
  const std::string sql = "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', " +
                          std::to_string(version) + ")";
  return Exec(db, sql.c_str());
}

// Runs `step` and the stamp of `version` in one BEGIN IMMEDIATE transaction.
Status InTransaction(sqlite3* db, int version, Status (*step)(sqlite3*)) {
  SLUICE_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  Status status = step(db);
  if (status.ok()) status = Stamp(db, version);
  if (status.ok()) status = Exec(db, "COMMIT");
  if (!status.ok() && sqlite3_get_autocommit(db) == 0) (void)Exec(db, "ROLLBACK");
  return status;
}

}  // namespace

Result<int> ReadSqliteSchema(sqlite3* db, const std::string& where) {
  Result<bool> jobs = HasTable(db, "jobs");
  if (!jobs) return jobs.error();
  Result<bool> meta = HasTable(db, "meta");
  if (!meta) return meta.error();
  if (!*jobs && !*meta) return kSchemaVersion;  // a new database
  if (!*meta) return kUnmarkedSchemaVersion;
  Result<std::optional<int64_t>> mark = ReadMark(db);
  if (!mark) return mark.error();
  if (!*mark) return *jobs ? kUnmarkedSchemaVersion : kSchemaVersion;
  if (**mark < kUnmarkedSchemaVersion || **mark > 1'000'000) {
    return Internal(where + ": meta.schema_version: expected a schema version >= " +
                    std::to_string(kUnmarkedSchemaVersion) + ", got " + std::to_string(**mark));
  }
  return static_cast<int>(**mark);
}

Status UpgradeSqliteSchema(sqlite3* db, int found, const std::string& where) {
  Result<std::optional<int64_t>> mark = ReadMark(db);
  if (!mark) return mark.error();
  if (found == kSchemaVersion) {
    if (*mark) return Status::Ok();
    return InTransaction(db, kSchemaVersion, [](sqlite3*) { return Status::Ok(); });
  }
  for (const SqliteMigration& migration : kMigrations) {
    if (migration.to <= found) continue;
    Status step = InTransaction(db, migration.to, migration.apply);
    if (!step.ok()) {
      return Status(step.code(), where + ": upgrading from schema " +
                                     std::to_string(migration.to - 1) + " to " +
                                     std::to_string(migration.to) + ": " + step.message());
    }
  }
  return Status::Ok();
}

}  // namespace sluice::store
