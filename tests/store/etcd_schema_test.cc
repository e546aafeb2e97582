// The etcd store's schema version (R-OPS-5, store/etcd_schema.h) on a real etcd on loopback:
// the previous schema's keys (tests/fixtures/state-v1/etcd.json, loaded into a fresh etcd)
// open upgraded by the leader with every job intact, a second leader finds nothing to do, a
// new prefix is stamped at once, and a leader older than the state refuses it and changes
// nothing. Skipped, with the reason, when etcd is not installed.
#include "store/etcd_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "store/etcd_store.h"
#include "store/state_v1_fixture.h"
#include "testing/etcd_cluster.h"

namespace sluice::store {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

constexpr const char* kPrefix = "/sluice";  // the fixture's

// The state's keys and values: everything under the prefix but the election's keys.
std::map<std::string, std::string> StateKeys(EtcdClient& client) {
  std::map<std::string, std::string> keys;
  const std::string base = std::string(kPrefix) + "/";
  Result<EtcdRange> range = client.Range(base, PrefixRangeEnd(base), 0, 0);
  EXPECT_TRUE(range) << range.error().ToString();
  if (!range) return keys;
  for (const EtcdKv& kv : range->kvs) {
    if (kv.key.starts_with(base + "meta/leader") || kv.key.starts_with(base + "meta/heard/") ||
        kv.key == base + "meta/written") {
      continue;  // the election's, changed by every campaign
    }
    keys[kv.key] = kv.value;
  }
  return keys;
}

class EtcdSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = sluice::testing::EtcdCluster::Unavailable()) GTEST_SKIP() << *why;
    std::string error;
    cluster_ = sluice::testing::EtcdCluster::Start(1, error);
    ASSERT_NE(cluster_, nullptr) << error;
    client_ = std::make_unique<EtcdClient>(std::vector<std::string>{cluster_->endpoint(0)},
                                           milliseconds(5000));
  }

  // Puts every key of the fixture's dump, 100 to a txn.
  void LoadFixture() {
    std::ifstream in(testing::StateV1Dir() / "etcd.json");
    const nlohmann::json dump = nlohmann::json::parse(in, nullptr, false);
    ASSERT_TRUE(dump.is_object() && dump.size() > 12);
    std::vector<EtcdOp> ops;
    for (const auto& [key, value] : dump.items()) {
      ops.push_back({.key = key, .value = value.get<std::string>()});
      if (ops.size() == 100) Put(ops);
    }
    Put(ops);
  }

  void Put(std::vector<EtcdOp>& ops) {
    if (ops.empty()) return;
    Result<EtcdTxnResult> txn = client_->Txn({}, ops, "");
    ASSERT_TRUE(txn && txn->succeeded) << (txn ? "compares failed" : txn.error().ToString());
    ops.clear();
  }

  std::unique_ptr<EtcdStore> Lead(const std::string& candidate) {
    auto options = ParseEtcdUrl(cluster_->Url(kPrefix));
    EXPECT_TRUE(options);
    options->candidate = candidate;
    auto store = EtcdStore::Open(*options);
    EXPECT_TRUE(store) << store.error().ToString();
    if (!store) return nullptr;
    const Status led = (*store)->AwaitLeadership(seconds(10));
    EXPECT_TRUE(led.ok()) << led.ToString();
    return std::move(*store);
  }

  std::optional<std::string> Mark() {
    Result<EtcdRange> range =
        client_->Range(std::string(kPrefix) + "/meta/schema_version", "", 1, 0);
    if (!range || range->kvs.empty()) return std::nullopt;
    return range->kvs.front().value;
  }

  std::unique_ptr<sluice::testing::EtcdCluster> cluster_;
  std::unique_ptr<EtcdClient> client_;
};

TEST_F(EtcdSchemaTest, ThePreviousSchemasKeysOpenUpgradedWithEveryJobIntact) {
  LoadFixture();
  ASSERT_EQ(Mark(), std::nullopt);
  auto store = Lead("a");
  ASSERT_NE(store, nullptr);
  Result<Snapshot> snap = store->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_EQ(snap->schema.found, kUnmarkedSchemaVersion);
  EXPECT_TRUE(snap->schema.upgraded());
  testing::ExpectStateV1Jobs(snap->jobs);
  EXPECT_EQ(snap->settings.size(), 4u);
  EXPECT_EQ(Mark(), std::to_string(kSchemaVersion));
  // The store still writes: the upgrade left its txn chain (the written mark) alone.
  WriteBatch batch;
  StoredJob held = snap->jobs[4];
  held.state = "PENDING";
  batch.jobs.push_back(held);
  EXPECT_TRUE(store->WriteSync(batch).ok());
}

TEST_F(EtcdSchemaTest, TheNextLeaderOfAnUpgradedStateFindsNothingToDo) {
  LoadFixture();
  std::vector<StoredJob> first;
  {
    auto store = Lead("a");
    ASSERT_NE(store, nullptr);
    first = store->Load()->jobs;
  }
  const auto before = StateKeys(*client_);
  auto store = Lead("b");
  ASSERT_NE(store, nullptr);
  Result<Snapshot> snap = store->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_FALSE(snap->schema.upgraded());
  EXPECT_EQ(snap->jobs, first);
  EXPECT_EQ(StateKeys(*client_), before);
}

TEST_F(EtcdSchemaTest, ANewPrefixIsStampedAtTheCurrentSchema) {
  auto store = Lead("a");
  ASSERT_NE(store, nullptr);
  Result<Snapshot> snap = store->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_FALSE(snap->schema.upgraded());
  EXPECT_EQ(Mark(), std::to_string(kSchemaVersion));
}

TEST_F(EtcdSchemaTest, ALeaderOlderThanTheStateRefusesItAndChangesNothing) {
  LoadFixture();
  std::vector<EtcdOp> newer = {{.key = std::string(kPrefix) + "/meta/schema_version",
                                .value = std::to_string(kSchemaVersion + 1)}};
  Put(newer);
  const auto before = StateKeys(*client_);
  auto store = Lead("old");
  ASSERT_NE(store, nullptr);
  Result<Snapshot> snap = store->Load();
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(snap.error().message(), HasSubstr("etcd prefix /sluice"));
  EXPECT_THAT(snap.error().message(),
              HasSubstr("schema version " + std::to_string(kSchemaVersion + 1)));
  EXPECT_THAT(snap.error().message(), HasSubstr("this sluice's " + std::to_string(kSchemaVersion)));
  EXPECT_EQ(StateKeys(*client_), before);
}

TEST_F(EtcdSchemaTest, OnlyTheLeaderUpgrades) {
  LoadFixture();
  // A fence that does not hold (no such leader): the upgrade's txn changes nothing.
  const std::vector<EtcdCompare> not_leading = {{.key = std::string(kPrefix) + "/meta/leader",
                                                 .target = EtcdCompare::Target::kCreate,
                                                 .revision = 999'999}};
  const auto before = StateKeys(*client_);
  Result<SchemaOpened> opened = OpenEtcdSchema(*client_, kPrefix, not_leading, "test");
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(StateKeys(*client_), before);
  EXPECT_EQ(Mark(), std::nullopt);
}

}  // namespace
}  // namespace sluice::store
