// The SQLite store's error mapping and statement helpers, shared by the store (sqlite_store.cc),
// its readers (sqlite_history.cc, sqlite_spec_reader.cc) and its migrations (sqlite_schema.cc).
// A fault of the disk under the state directory (full, I/O error, cannot create the WAL's
// files) may pass: kResourceExhausted, and the server waits for space (docs/reliability.md);
// anything else (corruption, misuse) is kInternal.
// Thread-safety: as the connection given.
#pragma once

#include <string>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace sluice::store {

// The Status of `db`'s last error, with `message`.
Status SqlStatus(sqlite3* db, const std::string& message);
// SqlStatus with "<what>: <SQLite's message>".
Status SqlError(sqlite3* db, const std::string& what);
// Runs `sql` (one or more statements) without results.
Status Exec(sqlite3* db, const char* sql);
// A second connection to the store's database at `db_path` (the history's, the spec reader's),
// opened with `flags` (SQLITE_OPEN_READONLY or _READWRITE; NOMUTEX is added), for `what` (the
// error's text). It waits up to 5 s on a lock, and it keeps the WAL's files when it closes:
// the last connection to close deletes them unless told to keep them, as the store's own
// is (a restart on a full disk must not need to create them).
Result<sqlite3*> OpenSecondConnection(const std::string& db_path, int flags,
                                      const std::string& what);
// Column `col` of `s`'s current row as text ("" for NULL).
std::string Text(sqlite3_stmt* s, int col);

}  // namespace sluice::store
