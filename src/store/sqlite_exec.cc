#include "store/sqlite_exec.h"

#include <sqlite3.h>

#include <cerrno>

namespace sluice::store {

Status SqlStatus(sqlite3* db, const std::string& message) {
  const int code = db != nullptr ? (sqlite3_extended_errcode(db) & 0xff) : SQLITE_ERROR;
  if (code == SQLITE_FULL || code == SQLITE_IOERR || code == SQLITE_CANTOPEN) {
    const int system_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
    return Status(StatusCode::kResourceExhausted,
                  "the state directory's disk failed (" +
                      std::string(system_errno == ENOSPC || code == SQLITE_FULL ? "no space left"
                                                                                : "I/O error") +
                      "): " + message);
  }
  return Internal(message);
}

Status SqlError(sqlite3* db, const std::string& what) {
  return SqlStatus(db, what + ": " + (db != nullptr ? sqlite3_errmsg(db) : "no database"));
}

Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string message = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    return SqlStatus(db, std::string("sqlite: ") + sql + ": " + message);
  }
  return Status::Ok();
}

Result<sqlite3*> OpenSecondConnection(const std::string& db_path, int flags,
                                      const std::string& what) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    Status status = SqlError(db, "opening " + db_path + " " + what);
    sqlite3_close(db);
    return status;
  }
  sqlite3_busy_timeout(db, 5000);
  int persist_wal = 1;
  sqlite3_file_control(db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist_wal);
  return db;
}

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* text = sqlite3_column_text(s, col);  // before _bytes: its length as text
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(s, col)));
}

}  // namespace sluice::store
