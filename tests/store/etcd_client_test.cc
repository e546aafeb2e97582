// EtcdClient's connection handling on a real one-member etcd on loopback: a member that was
// down for a while is used again by the same client once it is back (the store's threads keep
// one client each for the process's life). Skipped, with the reason, when etcd is not
// installed.
#include "store/etcd_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "testing/etcd_cluster.h"

namespace sluice::store {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// Down for 8 s: longer than gRPC's ~5 s after which an idle channel that lost its connection
// settles in TRANSIENT_FAILURE. A client that gave up on such a channel at once never
// reconnected: every later call answered "cannot connect" although etcd was serving.
TEST(EtcdClientTest, AMemberDownForSecondsIsUsedAgainOnceBack) {
  if (auto why = testing::EtcdCluster::Unavailable()) GTEST_SKIP() << *why;
  std::string error;
  auto cluster = testing::EtcdCluster::Start(1, error);
  ASSERT_NE(cluster, nullptr) << error;
  EtcdClient client({cluster->endpoint(0)}, milliseconds(1000));
  ASSERT_TRUE(client.Range("k", "", 1, 0)) << "before";

  cluster->Kill(0);
  const auto down_until = Clock::now() + seconds(8);
  while (Clock::now() < down_until) {
    Result<EtcdRange> down = client.Range("k", "", 1, 0);
    ASSERT_FALSE(down);
    EXPECT_EQ(down.error().code(), StatusCode::kUnavailable) << down.error().ToString();
    std::this_thread::sleep_for(milliseconds(500));
  }
  ASSERT_TRUE(cluster->Restart(0));
  ASSERT_TRUE(cluster->WaitHealthy(0, seconds(10)));
  Result<EtcdRange> back = Status(StatusCode::kUnavailable, "not tried");
  for (const auto deadline = Clock::now() + seconds(5); !back && Clock::now() < deadline;) {
    back = client.Range("k", "", 1, 0);
    if (!back) std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(back) << back.error().ToString();
}

// A renewal and a read say in which raft term they were answered (EtcdStore::ConfirmLead
// compares them): both non-zero, the same on a settled cluster.
TEST(EtcdClientTest, RenewalsAndReadsCarryTheirRaftTerm) {
  if (auto why = testing::EtcdCluster::Unavailable()) GTEST_SKIP() << *why;
  std::string error;
  auto cluster = testing::EtcdCluster::Start(1, error);
  ASSERT_NE(cluster, nullptr) << error;
  EtcdClient client({cluster->endpoint(0)}, milliseconds(2000));
  Result<EtcdLease> lease = client.GrantLease(5);
  ASSERT_TRUE(lease) << lease.error().ToString();
  Result<EtcdLease> renewed = client.KeepAlive(lease->id);
  ASSERT_TRUE(renewed) << renewed.error().ToString();
  Result<EtcdRange> read = client.Range("k", "", 1, 0);
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_GT(renewed->raft_term, 0u);
  EXPECT_EQ(renewed->raft_term, read->raft_term);
}

}  // namespace
}  // namespace sluice::store
