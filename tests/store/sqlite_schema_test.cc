// The SQLite store's schema version (R-OPS-5, store/sqlite_schema.h): the previous schema's
// state (tests/fixtures/state-v1, copied: the fixture is never changed) opens upgraded in
// place with every job intact, a second open changes nothing, a new state is stamped at once,
// and a state of a newer schema is refused with nothing changed.
#include "store/sqlite_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include "store/state_v1_fixture.h"
#include "store/store.h"
#include "testing/subprocess.h"

namespace sluice::store {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The fixture's database copied into a fresh state directory.
fs::path CopyStateV1(const sluice::testing::TempDir& tmp) {
  const fs::path dir = tmp.path() / "state";
  fs::create_directories(dir);
  fs::copy_file(testing::StateV1Dir() / "sluice.db", dir / "sluice.db");
  return dir;
}

// `sql`'s first column of its first row as another process reads the database, nullopt when
// there is no row.
std::optional<int64_t> QueryInt(const fs::path& dir, const std::string& sql) {
  sqlite3* db = nullptr;
  std::optional<int64_t> value;
  if (sqlite3_open_v2((dir / "sluice.db").c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) ==
      SQLITE_OK) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
      value = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return value;
}

std::optional<int64_t> StoredSchema(const fs::path& dir) {
  return QueryInt(dir, "SELECT value FROM meta WHERE key = 'schema_version'");
}

void Execute(const fs::path& dir, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "sluice.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

std::string FileBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SqliteSchemaTest, ThePreviousSchemasStateOpensUpgradedWithEveryJobIntact) {
  sluice::testing::TempDir tmp;
  const fs::path dir = CopyStateV1(tmp);
  ASSERT_EQ(StoredSchema(dir), std::nullopt);  // the fixture has no mark: schema 1
  {
    auto store = Store::Open(dir.string());
    ASSERT_TRUE(store) << store.error().ToString();
    Result<Snapshot> snap = (*store)->Load();
    ASSERT_TRUE(snap) << snap.error().ToString();
    EXPECT_EQ(snap->schema.found, kUnmarkedSchemaVersion);
    EXPECT_TRUE(snap->schema.upgraded());
    EXPECT_EQ(snap->epoch, 2u);  // the fixture's server led at epoch 1
    testing::ExpectStateV1Jobs(snap->jobs);
    EXPECT_EQ(snap->settings.size(), 4u);  // the job credential keys
  }
  EXPECT_EQ(StoredSchema(dir), kSchemaVersion);
}

TEST(SqliteSchemaTest, ASecondOpenOfTheUpgradedStateIsANoOp) {
  sluice::testing::TempDir tmp;
  const fs::path dir = CopyStateV1(tmp);
  std::vector<StoredJob> first;
  {
    auto store = Store::Open(dir.string());
    ASSERT_TRUE(store) << store.error().ToString();
    first = (*store)->Load()->jobs;
  }
  auto store = Store::Open(dir.string());
  ASSERT_TRUE(store) << store.error().ToString();
  Result<Snapshot> snap = (*store)->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_EQ(snap->schema.found, kSchemaVersion);
  EXPECT_FALSE(snap->schema.upgraded());
  EXPECT_EQ(snap->jobs, first);
  EXPECT_EQ(StoredSchema(dir), kSchemaVersion);
}

TEST(SqliteSchemaTest, ANewStateIsCreatedAtTheCurrentSchema) {
  sluice::testing::TempDir tmp;
  const fs::path dir = tmp.path() / "state";
  {
    auto store = Store::Open(dir.string());
    ASSERT_TRUE(store) << store.error().ToString();
    Result<Snapshot> snap = (*store)->Load();
    ASSERT_TRUE(snap) << snap.error().ToString();
    EXPECT_FALSE(snap->schema.upgraded());
  }
  EXPECT_EQ(StoredSchema(dir), kSchemaVersion);
}

TEST(SqliteSchemaTest, AStateOfANewerSchemaIsRefusedAndLeftUnchanged) {
  sluice::testing::TempDir tmp;
  const fs::path dir = CopyStateV1(tmp);
  Execute(dir, "INSERT INTO meta (key, value) VALUES ('schema_version', " +
                   std::to_string(kSchemaVersion + 1) + ")");
  const std::string before = FileBytes(dir / "sluice.db");
  auto store = Store::Open(dir.string());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), StatusCode::kFailedPrecondition);
  // The message names the state and both versions (what an operator must act on).
  EXPECT_THAT(store.error().message(), HasSubstr("state directory " + dir.string()));
  EXPECT_THAT(store.error().message(),
              HasSubstr("schema version " + std::to_string(kSchemaVersion + 1)));
  EXPECT_THAT(store.error().message(),
              HasSubstr("this sluice's " + std::to_string(kSchemaVersion)));
  EXPECT_EQ(FileBytes(dir / "sluice.db"), before);
  EXPECT_EQ(QueryInt(dir, "SELECT value FROM meta WHERE key = 'epoch'"), 1);
  EXPECT_EQ(StoredSchema(dir), kSchemaVersion + 1);
  // The directory's lock was released: the refusal holds nothing.
  auto again = Store::Open(dir.string());
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kFailedPrecondition);
}

TEST(SqliteSchemaTest, AMarkThatIsNoVersionIsRefused) {
  sluice::testing::TempDir tmp;
  const fs::path dir = CopyStateV1(tmp);
  Execute(dir, "INSERT INTO meta (key, value) VALUES ('schema_version', 0)");
  auto store = Store::Open(dir.string());
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), StatusCode::kInternal);
  EXPECT_THAT(store.error().message(), HasSubstr("meta.schema_version"));
}

}  // namespace
}  // namespace sluice::store
