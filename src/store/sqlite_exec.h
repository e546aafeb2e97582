// The SQLite store's error mapping and statement helper, shared by the store (sqlite_store.cc)
// and its migrations (sqlite_schema.cc).
// A fault of the disk under the state directory (full, I/O error, cannot create the WAL's
// files) may pass: kResourceExhausted, and the server waits for space (docs/reliability.md);
// anything else (corruption, misuse) is kInternal.
// Thread-safety: as the connection given.
#pragma once

#include <string>

#include "base/status.h"

struct sqlite3;

namespace sluice::store {

// The Status of `db`'s last error, with `message`.
Status SqlStatus(sqlite3* db, const std::string& message);
// SqlStatus with "<what>: <SQLite's message>".
Status SqlError(sqlite3* db, const std::string& what);
// Runs `sql` (one or more statements) without results.
Status Exec(sqlite3* db, const char* sql);

}  // namespace sluice::store
