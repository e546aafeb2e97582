// The Store contract, one TYPED_TEST suite over both backends (STYLE.md: contract tests):
// rows round-trip across a reopen and the epoch grows; batches commit in queue order with
// their callbacks in that order, grouped into fewer transactions; a write after a rival took
// over fails with kFailedPrecondition and changes nothing. The etcd backend runs on a real
// 3-member cluster (tests/testing/etcd_cluster.h), skipped when etcd is not installed.
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "base/array_ids.h"
#include "store/etcd_store.h"
#include "store/store.h"
#include "testing/etcd_cluster.h"
#include "testing/subprocess.h"

namespace sluice::store {
namespace {

using std::chrono::seconds;

StoredJob Row(JobId id, int32_t bypass = 0) {
  return StoredJob{.id = id,
                   .spec = "{\"command\":\"true\",\"id\":" + std::to_string(id) + "}",
                   .state = "PENDING",
                   .seq = static_cast<uint64_t>(id),
                   .submit_time = 100 + id,
                   .phase = "PENDING",
                   .enqueue_time = 100 + id,
                   .policy = "fifo",
                   .bypass_count = bypass,
                   .epoch = 1};
}

// One 3-member cluster for every etcd contract test, each test on its own prefix.
testing::EtcdCluster* SharedCluster(std::string& error) {
  static std::string start_error;
  static std::unique_ptr<testing::EtcdCluster> cluster = [] {
    return testing::EtcdCluster::Start(3, start_error);
  }();
  error = start_error;
  return cluster.get();
}

class SqliteBackend {
 public:
  std::optional<std::string> Unavailable() { return std::nullopt; }
  Result<std::unique_ptr<Store>> Open() { return Store::OpenUrl(dir_.path().string()); }
  // A rival controller bumps the epoch in the same directory.
  std::unique_ptr<Store> TakeOver(Store& leader) {
    EXPECT_TRUE(leader.OverwriteEpochForTest(leader.epoch() + 1).ok());
    return nullptr;
  }

 private:
  testing::TempDir dir_;
};

class EtcdBackend {
 public:
  std::optional<std::string> Unavailable() {
    if (auto why = testing::EtcdCluster::Unavailable()) return why;
    std::string error;
    if (SharedCluster(error) == nullptr) return "etcd cluster: " + error;
    return std::nullopt;
  }
  Result<std::unique_ptr<Store>> Open() {
    std::string error;
    const std::string url = SharedCluster(error)->Url(prefix_);
    auto store =
        Store::OpenUrl(url, {.candidate = "c" + std::to_string(++opened_), .lease_seconds = 1});
    if (!store) return store;
    SLUICE_RETURN_IF_ERROR((*store)->AwaitLeadership(seconds(10)));
    return store;
  }
  // The leader stops renewing (as if paused); a second store campaigns and wins at expiry.
  std::unique_ptr<Store> TakeOver(Store& leader) {
    static_cast<EtcdStore&>(leader).StopKeepAliveForTest();
    auto rival = Open();
    EXPECT_TRUE(rival) << rival.error().ToString();
    return rival ? std::move(*rival) : nullptr;
  }

 private:
  static inline std::atomic<int> next_prefix_ = 0;
  std::string prefix_ = "/contract" + std::to_string(++next_prefix_);
  int opened_ = 0;
};

template <typename Backend>
class StoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = backend_.Unavailable()) GTEST_SKIP() << *why;
  }
  Backend backend_;
};

using Backends = ::testing::Types<SqliteBackend, EtcdBackend>;
TYPED_TEST_SUITE(StoreContractTest, Backends);

// A restart's load (issue 45): everything but the rows, then the rows of an id range in id
// order, in chunks no larger than asked, the same rows Load returns.
TYPED_TEST(StoreContractTest, TheTwoStepLoadHandsTheRowsOfARangeInIdOrderByChunks) {
  const JobId element = (JobId{3} << 32) | 2;  // element 2 of array 2 (base/array_ids.h)
  {
    auto store = this->backend_.Open();
    ASSERT_TRUE(store) << store.error().ToString();
    ASSERT_TRUE((*store)
                    ->WriteSync(WriteBatch{.jobs = {Row(5), Row(element), Row(1), Row(2), Row(9)},
                                           .hosts = {{"x1", "{\"slots\":4}"}},
                                           .settings = {{"next_job_id", 10}}})
                    .ok());
  }
  auto store = this->backend_.Open();
  ASSERT_TRUE(store) << store.error().ToString();
  auto whole = (*store)->Load();
  ASSERT_TRUE(whole) << whole.error().ToString();
  Store& s = **store;
  auto snap = s.LoadAllButJobs();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_TRUE(snap->jobs.empty());
  EXPECT_EQ(snap->hosts, whole->hosts);
  EXPECT_EQ(snap->settings, whole->settings);
  std::vector<std::vector<JobId>> chunks;
  std::vector<StoredJob> read;
  const auto take = [&](std::vector<StoredJob>&& rows) {
    chunks.emplace_back();
    for (StoredJob& row : rows) {
      chunks.back().push_back(row.id);
      read.push_back(std::move(row));
    }
  };
  ASSERT_TRUE(s.ReadJobs(kMaxArrayJobId + 1, std::numeric_limits<JobId>::max(), 2, take).ok());
  ASSERT_TRUE(s.ReadJobs(0, kMaxArrayJobId, 2, take).ok());
  EXPECT_EQ(chunks, (std::vector<std::vector<JobId>>{{element}, {1, 2}, {5, 9}}));
  std::vector<StoredJob> expected;
  for (JobId id : {element, JobId{1}, JobId{2}, JobId{5}, JobId{9}}) {
    for (const StoredJob& row : whole->jobs) {
      if (row.id == id) expected.push_back(row);
    }
  }
  EXPECT_EQ(read, expected);
}

TYPED_TEST(StoreContractTest, RowsRoundTripAcrossAReopenAndTheEpochGrows) {
  StoredJob full = Row(7);
  full.exit_code = 3;
  full.first_blocked = 120;
  full.gate_since = 130;
  full.allocation = R"({"hosts":[{"host":"h1","slots":2}]})";
  full.cancel_requested = true;
  full.preempted_for = 9;
  full.cpu_seconds = 1.235;
  full.max_rss_mb = 64.5;
  full.message = "memory limit 64 MB reached (peak 64 MB, 1 process killed by the OOM killer)";
  full.steps = R"([{"step":1,"host":"h1","command":"hostname","start_time":1764450001,)"
               R"("end_time":1764450002,"exit_code":0,"signal":null,"cpu_seconds":0.01,)"
               R"("max_rss_mb":3.2,"state":"COMPLETED"}])";
  full.events = R"([{"event":"requeue","time":1764450003,"start_time":1764450001,"why":"x"}])";
  uint64_t first_epoch = 0;
  {
    auto store = this->backend_.Open();
    ASSERT_TRUE(store) << store.error().ToString();
    first_epoch = (*store)->epoch();
    EXPECT_GT(first_epoch, 0u);
    EXPECT_EQ((*store)->role(), Role::kLeader);
    ASSERT_TRUE(
        (*store)
            ->WriteSync(WriteBatch{.jobs = {Row(1), full},
                                   .hosts = {{"x1", "{\"slots\":4}"}},
                                   .config_version = 3,
                                   .settings = {{"queue_open/a", 0}, {"host_closed/h1", 1}}})
            .ok());
    ASSERT_TRUE(
        (*store)->WriteSync(WriteBatch{.settings = {{"host_closed/h1", std::nullopt}}}).ok());
  }
  auto store = this->backend_.Open();
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_GT((*store)->epoch(), first_epoch);
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap) << snap.error().ToString();
  EXPECT_EQ(snap->epoch, (*store)->epoch());
  EXPECT_EQ(snap->config_version, 3);
  ASSERT_EQ(snap->jobs.size(), 2u);
  EXPECT_EQ(snap->jobs[0], Row(1));
  EXPECT_EQ(snap->jobs[1], full);
  ASSERT_EQ(snap->hosts.size(), 1u);
  EXPECT_EQ(snap->hosts[0], (StoredHost{"x1", "{\"slots\":4}"}));
  EXPECT_EQ(snap->settings, (std::map<std::string, int64_t>{{"queue_open/a", 0}}));
}

// 200 batches queued at once: their callbacks run in queue order, all succeed, the writer
// grouped them, and the last write of a row wins.
TYPED_TEST(StoreContractTest, BatchesCommitInQueueOrderAndAreGrouped) {
  auto store = this->backend_.Open();
  ASSERT_TRUE(store) << store.error().ToString();
  constexpr int kBatches = 200;
  std::mutex mu;
  std::vector<int> order;
  std::atomic<int> failures = 0;
  for (int i = 0; i < kBatches; ++i) {
    (*store)->Write(WriteBatch{.jobs = {Row(1, i), Row(100 + i)}}, [&, i](const Status& s) {
      if (!s.ok()) ++failures;
      std::lock_guard lock(mu);
      order.push_back(i);
    });
  }
  (*store)->Flush();
  EXPECT_EQ(failures, 0);
  ASSERT_EQ(order.size(), static_cast<size_t>(kBatches));
  for (int i = 0; i < kBatches; ++i) EXPECT_EQ(order[i], i);
  const StoreStats stats = (*store)->stats();
  EXPECT_EQ(stats.batches, kBatches);
  EXPECT_LT(stats.transactions, stats.batches);
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->jobs.size(), static_cast<size_t>(kBatches + 1));
  EXPECT_EQ(snap->jobs[0], Row(1, kBatches - 1));
}

TYPED_TEST(StoreContractTest, AWriteAfterARivalTookOverFailsAndChangesNothing) {
  auto store = this->backend_.Open();
  ASSERT_TRUE(store) << store.error().ToString();
  ASSERT_TRUE((*store)->WriteSync(WriteBatch{.jobs = {Row(1)}}).ok());
  std::unique_ptr<Store> rival = this->backend_.TakeOver(**store);
  const Status fenced = (*store)->WriteSync(WriteBatch{.jobs = {Row(2)}, .config_version = 9});
  EXPECT_EQ(fenced.code(), StatusCode::kFailedPrecondition) << fenced.ToString();
  // Fenced for good: a later write fails the same way.
  EXPECT_EQ((*store)->WriteSync(WriteBatch{.jobs = {Row(3)}}).code(),
            StatusCode::kFailedPrecondition);
  store->reset();
  rival.reset();
  auto reopened = this->backend_.Open();
  ASSERT_TRUE(reopened) << reopened.error().ToString();
  auto snap = (*reopened)->Load();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->jobs.size(), 1u);
  EXPECT_EQ(snap->jobs[0].id, 1);
  EXPECT_EQ(snap->config_version, 0);
}

}  // namespace
}  // namespace sluice::store
