// The SQLite store's schema version and its migrations (store/schema_version.h, R-OPS-5).
//
// Representation: the version is the `meta` row `schema_version`, beside the epoch and the
// configuration version. Not SQLite's PRAGMA user_version: the `meta` table is where the store
// already keeps its own integers, written in the same transactions as the rows; a row is seen
// by `sqlite3 sluice.db 'SELECT * FROM meta'` with the rest; and the etcd store keeps the same
// mark as a key under PREFIX/meta/, so both stores say it alike. A database with no `jobs`
// table is new; one with the table and no row is kUnmarkedSchemaVersion.
// The history (store/sqlite_history.h) lives in the same database: this version covers it.
// Thread-safety: as the connection given (Open's thread, before the writer starts).
#pragma once

#include <string>

#include "base/status.h"
#include "store/schema_version.h"

struct sqlite3;

namespace sluice::store {

// The schema version of the database `db` holds, read without writing anything:
// kSchemaVersion for a new database (none of the store's tables). `where` names the state
// in errors. Errors: kInternal when the mark is not a version; SQLite's read errors.
Result<int> ReadSqliteSchema(sqlite3* db, const std::string& where);

// Brings the database from schema `found` (ReadSqliteSchema; <= kSchemaVersion) to
// kSchemaVersion: each migration after `found` in its own BEGIN IMMEDIATE transaction that
// also stamps the version it reaches; a new database (no mark yet) is just stamped.
// REQUIRES: the store's tables exist (kSchema ran). Errors: the failing step's, naming the
// versions; the transaction was rolled back (the state is at the last version stamped).
Status UpgradeSqliteSchema(sqlite3* db, int found, const std::string& where);

}  // namespace sluice::store
