// Test helper: changes a controller's SQLite state behind its back, as another connection
// (another process, an operator's sqlite3 shell) would, to stand in a stored row the
// controller did not write (an edited database, a bug of an older version).
// Thread-safety: a plain function.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

namespace sluice::testing {

// Runs `sql` on `state_dir`'s sluice.db, waiting up to 5 s for the controller's own
// connection; the statement must change exactly one row.
inline void ExecOnStateDatabase(const std::filesystem::path& state_dir, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((state_dir / "sluice.db").c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  EXPECT_EQ(sqlite3_changes(db), 1) << sql;
  sqlite3_close(db);
}

}  // namespace sluice::testing
