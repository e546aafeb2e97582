// SqliteSpecReader: the SQLite store's reader of jobs' specs by id (issue 45), so that the
// controller need not keep every job's spec text in memory (Store::ServesSpecs).
//
// Representation: its own read-only connection to DIR/sluice.db (WAL: it reads the last
// committed state while the writer thread commits, and never blocks it) and one prepared
// `SELECT spec FROM jobs WHERE id = ?`.
// Thread-safety: Read from any thread (one mutex serialises the connection); the controller
// calls it with its own lock held (lock order: controller, spec reader).
#pragma once

#include <memory>
#include <string>

#include "base/ids.h"
#include "base/mutex.h"
#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace sluice::store {

class SqliteSpecReader {
 public:
  // Opens a read-only connection to `db_path`. Errors: kInternal with SQLite's message.
  static Result<std::unique_ptr<SqliteSpecReader>> Open(const std::string& db_path);
  ~SqliteSpecReader();
  SqliteSpecReader(const SqliteSpecReader&) = delete;
  SqliteSpecReader& operator=(const SqliteSpecReader&) = delete;

  // The committed spec of job `id`. Errors: kNotFound when no row has that id; SqlStatus's.
  Result<std::string> Read(JobId id);

 private:
  SqliteSpecReader(sqlite3* db, sqlite3_stmt* select) : db_(db), select_(select) {}

  Mutex mu_{LockRank::kSpecReader};
  sqlite3* const db_;
  sqlite3_stmt* const select_ SLUICE_PT_GUARDED_BY(mu_);
};

}  // namespace sluice::store
