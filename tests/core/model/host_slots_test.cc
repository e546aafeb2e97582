// ClusterState::host_slots(): the dense per-host slots a cycle's Capacity is copied from
// must follow every change to a host (starts, ends, exclusive grants, host states, hosts
// added, resized and removed by a reconfiguration, clones), or cycles would see stale room.
#include <gtest/gtest.h>

#include "core/alloc/capacity.h"
#include "core/cycle/events.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

// host_slots() against the hosts themselves, and a Capacity built from the state against
// the same values.
void ExpectMirrorsHosts(const ClusterState& state) {
  const HostSlots& slots = state.topology().host_slots();
  ASSERT_EQ(slots.free.size(), state.topology().hosts().size());
  ASSERT_EQ(slots.total.size(), state.topology().hosts().size());
  ASSERT_EQ(slots.accepts_work.size(), state.topology().hosts().size());
  ASSERT_EQ(slots.idle.size(), state.topology().hosts().size());
  const Capacity capacity(state);
  int64_t free = 0;
  for (const Host& host : state.topology().hosts()) {
    SCOPED_TRACE(host.spec.name);
    const HostIndex h = host.index;
    const bool works = host.AcceptsWork();
    EXPECT_EQ(slots.free[h], works ? host.FreeSlots() : 0);
    EXPECT_EQ(slots.total[h], host.spec.slots);
    EXPECT_EQ(slots.accepts_work[h] != 0, works);
    EXPECT_EQ(slots.idle[h] != 0, works && host.running_jobs == 0);
    EXPECT_EQ(capacity.FreeSlots(h), slots.free[h]);
    EXPECT_EQ(capacity.TotalSlots(h), host.spec.slots);
    EXPECT_EQ(capacity.AcceptsWork(h), works);
    EXPECT_EQ(capacity.Idle(h), works && host.running_jobs == 0);
    // The free-host index (Occupy and Vacate keep it on their own, SyncHostUse).
    EXPECT_EQ((slots.has_free[h / 64] >> (h % 64)) & 1, slots.free[h] > 0 ? 1u : 0u);
    free += slots.free[h];
  }
  EXPECT_EQ(capacity.TotalFree(), free);
  EXPECT_EQ(capacity.TotalFree(), state.topology().free_slots());
}

TEST(HostSlotsTest, FollowsEveryChangeToAHost) {
  ClusterState state = ClusterBuilder().Hosts(3, 4).State();
  ExpectMirrorsHosts(state);

  SubmitRunning(state, JobBuilder(1).Tasks(6), 0);  // h1 full, h2 half
  ExpectMirrorsHosts(state);
  Submit(state, JobBuilder(2).Exclusive());  // the whole of h3
  state.Start(2, Allocation{.hosts = {HostGrant{.host = 2, .slots = 1, .whole_host = true}}}, 1);
  ExpectMirrorsHosts(state);
  EXPECT_EQ(state.topology().host_slots().free[2], 0);

  ASSERT_TRUE(Apply(HostChanged{"h2", HostState::kClosed}, 2, state).ok());
  ExpectMirrorsHosts(state);
  ASSERT_TRUE(Apply(JobFinished{1}, 3, state).ok());  // ends on a closed host
  ExpectMirrorsHosts(state);
  ASSERT_TRUE(Apply(HostChanged{"h2", HostState::kOk}, 4, state).ok());
  ExpectMirrorsHosts(state);
  ASSERT_TRUE(Apply(HostLost{"h3"}, 5, state).ok());
  ExpectMirrorsHosts(state);
  ASSERT_TRUE(Apply(JobCancelled{2}, 6, state).ok());
  ExpectMirrorsHosts(state);

  ASSERT_TRUE(Apply(HostAdded{HostSpec{.name = "h4", .slots = 8}}, 7, state).ok());
  ExpectMirrorsHosts(state);
  Submit(state, JobBuilder(3).Tasks(5));
  state.Start(3, Allocation{.hosts = {HostGrant{.host = 3, .slots = 5}}}, 8);
  ExpectMirrorsHosts(state);

  // Reconfigure: h1 grows, h2 goes, h3 comes back, h4 stays, h5 is new.
  ClusterConfig config = ClusterBuilder()
                             .Host("h1", 6)
                             .Host("h3", 2)
                             .Host("h4", 8)
                             .Host("h5", 3, HostState::kClosed)
                             .Config();
  ASSERT_TRUE(Apply(ConfigChanged{config}, 9, state).ok());
  ExpectMirrorsHosts(state);

  ClusterState copy = state.Clone();
  ExpectMirrorsHosts(copy);
  ASSERT_TRUE(Apply(JobFinished{3}, 10, copy).ok());
  ExpectMirrorsHosts(copy);
  ExpectMirrorsHosts(state);  // the original keeps its own
  EXPECT_LT(state.topology().host_slots().free, copy.topology().host_slots().free);
}

}  // namespace
}  // namespace sluice::core
