// Advance reservations in both stores (issue 42, R-RSV-1, schema 3): rows written, replaced and
// deleted survive a reopen (SQLite) or the next leader (etcd), and a state of schema 2 — the
// fixture's layout with its version recorded, which is all that schema 2 added — opens
// upgraded to schema 3 with every job intact and room for reservations.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "store/etcd_store.h"
#include "store/state_v1_fixture.h"
#include "store/store.h"
#include "testing/etcd_cluster.h"
#include "testing/subprocess.h"

namespace sluice::store {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// The rows a test writes: two set, then one replaced and one deleted.
void WriteAndChange(Store& store) {
  WriteBatch first;
  first.reservations["course"] = R"({"name":"course","v":1})";
  first.reservations["fix"] = R"({"name":"fix"})";
  ASSERT_TRUE(store.WriteSync(std::move(first)).ok());
  WriteBatch second;
  second.reservations["course"] = R"({"name":"course","v":2})";
  second.reservations["fix"] = std::nullopt;
  ASSERT_TRUE(store.WriteSync(std::move(second)).ok());
}

const std::map<std::string, std::string> kExpected = {{"course", R"({"name":"course","v":2})"}};

void Execute(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(ReservationStoreTest, SqliteKeepsReservationsAcrossAReopen) {
  sluice::testing::TempDir tmp;
  const std::string dir = (tmp.path() / "state").string();
  {
    auto store = Store::Open(dir);
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)->Load());
    WriteAndChange(**store);
  }
  auto store = Store::Open(dir);
  ASSERT_TRUE(store) << store.error().ToString();
  Result<Snapshot> snap = (*store)->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_EQ(snap->reservations, kExpected);
}

TEST(ReservationStoreTest, ASqliteStateOfSchemaTwoIsUpgradedToThree) {
  sluice::testing::TempDir tmp;
  const fs::path dir = tmp.path() / "state";
  fs::create_directories(dir);
  fs::copy_file(testing::StateV1Dir() / "sluice.db", dir / "sluice.db");
  Execute(dir / "sluice.db",
          "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
          "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', 2)");
  {
    auto store = Store::Open(dir.string());
    ASSERT_TRUE(store) << store.error().ToString();
    Result<Snapshot> snap = (*store)->Load();
    ASSERT_TRUE(snap) << snap.error().ToString();
    EXPECT_EQ(snap->schema.found, 2);
    EXPECT_TRUE(snap->schema.upgraded());
    testing::ExpectStateV1Jobs(snap->jobs);
    EXPECT_TRUE(snap->reservations.empty());
    WriteAndChange(**store);
  }
  auto store = Store::Open(dir.string());
  ASSERT_TRUE(store) << store.error().ToString();
  Result<Snapshot> snap = (*store)->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_EQ(snap->schema.found, kSchemaVersion);
  EXPECT_EQ(kSchemaVersion, 3);
  EXPECT_EQ(snap->reservations, kExpected);
}

class EtcdReservationStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = sluice::testing::EtcdCluster::Unavailable()) GTEST_SKIP() << *why;
    std::string error;
    cluster_ = sluice::testing::EtcdCluster::Start(1, error);
    ASSERT_NE(cluster_, nullptr) << error;
  }

  std::unique_ptr<EtcdStore> Lead(const std::string& candidate) {
    auto options = ParseEtcdUrl(cluster_->Url("/sluice"));
    EXPECT_TRUE(options);
    options->candidate = candidate;
    auto store = EtcdStore::Open(*options);
    EXPECT_TRUE(store) << store.error().ToString();
    if (!store) return nullptr;
    EXPECT_TRUE((*store)->AwaitLeadership(seconds(10)).ok());
    return std::move(*store);
  }

  std::unique_ptr<sluice::testing::EtcdCluster> cluster_;
};

TEST_F(EtcdReservationStoreTest, TheNextLeaderReadsTheReservations) {
  {
    auto store = Lead("a");
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Load());
    WriteAndChange(*store);
  }
  auto store = Lead("b");
  ASSERT_NE(store, nullptr);
  Result<Snapshot> snap = store->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_EQ(snap->reservations, kExpected);
}

TEST_F(EtcdReservationStoreTest, AnEtcdStateOfSchemaTwoIsUpgradedToThree) {
  EtcdClient client({cluster_->endpoint(0)}, milliseconds(5000));
  std::ifstream in(testing::StateV1Dir() / "etcd.json");
  const nlohmann::json dump = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(dump.is_object());
  std::vector<EtcdOp> ops = {{.key = "/sluice/meta/schema_version", .value = "2"}};
  for (const auto& [key, value] : dump.items()) {
    ops.push_back({.key = key, .value = value.get<std::string>()});
    if (ops.size() < 100) continue;
    ASSERT_TRUE(client.Txn({}, ops, "").value().succeeded);
    ops.clear();
  }
  if (!ops.empty()) {
    ASSERT_TRUE(client.Txn({}, ops, "").value().succeeded);
  }
  auto store = Lead("a");
  ASSERT_NE(store, nullptr);
  Result<Snapshot> snap = store->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_EQ(snap->schema.found, 2);
  testing::ExpectStateV1Jobs(snap->jobs);
  Result<EtcdRange> mark = client.Range("/sluice/meta/schema_version", "", 1, 0);
  ASSERT_TRUE(mark && !mark->kvs.empty());
  EXPECT_EQ(mark->kvs.front().value, "3");
  WriteAndChange(*store);
  EXPECT_EQ(store->Load()->reservations, kExpected);
}

}  // namespace
}  // namespace sluice::store
