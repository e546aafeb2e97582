// R-HA-5 on the etcd store: a batch's deleted_jobs leave the store, and the leader compacts
// etcd's history every compact-revisions revisions (older revisions become unreadable).
#include <gtest/gtest.h>

#include "store/etcd_client.h"
#include "store/etcd_store.h"
#include "testing/etcd_cluster.h"

namespace sluice::store {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(EtcdRetentionTest, DeletedJobsLeaveAndHistoryIsCompacted) {
  if (auto why = testing::EtcdCluster::Unavailable()) GTEST_SKIP() << *why;
  std::string error;
  auto cluster = testing::EtcdCluster::Start(1, error);
  ASSERT_TRUE(cluster) << error;
  auto store = Store::OpenUrl(cluster->Url("/r") + "?compact-revisions=20");
  ASSERT_TRUE(store) << store.error().ToString();
  ASSERT_TRUE((*store)->AwaitLeadership(seconds(10)).ok());
  EtcdClient client({cluster->endpoint(0)}, milliseconds(2000));
  Result<EtcdRange> start = client.Range("/r/meta/leader", "", 1, 0);
  ASSERT_TRUE(start);
  for (JobId id = 1; id <= 150; ++id) {  // past the 100 revisions kept
    WriteBatch batch;
    batch.jobs.push_back(
        StoredJob{.id = id, .spec = "{}", .state = "DONE", .seq = 1, .phase = "ENDED"});
    ASSERT_TRUE((*store)->WriteSync(std::move(batch)).ok());
  }
  WriteBatch purge;
  purge.deleted_jobs = {1, 2, 3};
  ASSERT_TRUE((*store)->WriteSync(std::move(purge)).ok());
  Result<Snapshot> snap = (*store)->Load();
  ASSERT_TRUE(snap);
  ASSERT_EQ(snap->jobs.size(), 147u);
  EXPECT_EQ(snap->jobs.front().id, 4);
  // The revision before the writes was compacted away.
  EXPECT_FALSE(client.Range("/r/jobs/", PrefixRangeEnd("/r/jobs/"), 0, start->revision));
}

}  // namespace
}  // namespace sluice::store
