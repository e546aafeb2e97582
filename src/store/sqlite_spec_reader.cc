#include "store/sqlite_spec_reader.h"

#include <sqlite3.h>

#include <mutex>

#include "store/sqlite_exec.h"

namespace sluice::store {

Result<std::unique_ptr<SqliteSpecReader>> SqliteSpecReader::Open(const std::string& db_path) {
  Result<sqlite3*> opened = OpenSecondConnection(db_path, SQLITE_OPEN_READONLY, "to read specs");
  if (!opened) return opened.error();
  sqlite3* db = *opened;
  sqlite3_stmt* select = nullptr;
  if (sqlite3_prepare_v3(db, "SELECT spec FROM jobs WHERE id = ?1", -1, SQLITE_PREPARE_PERSISTENT,
                         &select, nullptr) != SQLITE_OK) {
    Status status = SqlError(db, "preparing the spec reader");
    sqlite3_close(db);
    return status;
  }
  return std::unique_ptr<SqliteSpecReader>(new SqliteSpecReader(db, select));
}

SqliteSpecReader::~SqliteSpecReader() {
  sqlite3_finalize(select_);
  sqlite3_close(db_);
}

Result<std::string> SqliteSpecReader::Read(JobId id) {
  std::lock_guard lock(mu_);
  sqlite3_reset(select_);
  sqlite3_bind_int64(select_, 1, id);
  const int step = sqlite3_step(select_);
  if (step == SQLITE_ROW) {
    std::string spec = Text(select_, 0);
    sqlite3_reset(select_);  // ends the read transaction: the WAL may be checkpointed past it
    return spec;
  }
  Status status = step == SQLITE_DONE ? NotFound("no stored row for job " + std::to_string(id))
                                      : SqlError(db_, "reading job " + std::to_string(id) + "'s spec");
  sqlite3_reset(select_);
  return status;
}

}  // namespace sluice::store
