// Capacity: a capacity rebuilt with Reset() into buffers an earlier cycle used (claims,
// rollbacks, debits, withheld hosts, select cursors, attribute columns) equals one freshly
// built from the same state, and both agree with the host records they mirror (free slots
// of hosts that accept work, the free-host index, the total), over seeded random sequences
// of starts, finishes, host state changes and reconfigurations. Drivers keep one Capacity
// across cycles (CycleWorkspace); a stale field would change decisions silently.
#include "core/alloc/capacity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/cycle/events.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::JobBuilder;

// Hosts of every host index visited by ForEachHostWithFree, in order.
std::vector<HostIndex> IndexedHosts(const Capacity& capacity) {
  std::vector<HostIndex> hosts;
  capacity.ForEachHostWithFree([&](HostIndex h) { hosts.push_back(h); });
  return hosts;
}

// `capacity` is what a fresh Capacity(state) is, field by field, and both match the hosts.
void ExpectFresh(Capacity& capacity, const ClusterState& state) {
  Capacity fresh(state);
  ASSERT_EQ(capacity.host_count(), state.topology().hosts().size());
  ASSERT_EQ(fresh.host_count(), state.topology().hosts().size());
  EXPECT_EQ(capacity.resource_count(), fresh.resource_count());
  int64_t total = 0;
  int32_t largest = 0;
  std::vector<HostIndex> with_free;
  for (const Host& host : state.topology().hosts()) {
    const HostIndex h = host.index;
    largest = std::max(largest, host.spec.slots);
    const int32_t free = host.AcceptsWork() ? host.FreeSlots() : 0;
    total += free;
    if (free > 0) with_free.push_back(h);
    EXPECT_EQ(fresh.FreeSlots(h), free) << "host " << h;
    EXPECT_EQ(capacity.FreeSlots(h), free) << "host " << h;
    EXPECT_EQ(capacity.TotalSlots(h), host.spec.slots);
    EXPECT_EQ(capacity.AcceptsWork(h), host.AcceptsWork());
    EXPECT_EQ(capacity.Idle(h), fresh.Idle(h));
    EXPECT_EQ(capacity.Idle(h), host.AcceptsWork() && host.running_jobs == 0);
    EXPECT_EQ(capacity.WithheldFor(h), kNoJob);
    for (ResourceId r = 0; r < capacity.resource_count(); ++r) {
      EXPECT_EQ(capacity.FreeResource(h, r), fresh.FreeResource(h, r));
      EXPECT_EQ(capacity.Defines(state, h, r), fresh.Defines(state, h, r));
    }
    EXPECT_EQ(capacity.AttributeColumn(state, "type")[h], fresh.AttributeColumn(state, "type")[h]);
  }
  for (ResourceId r = 0; r < state.topology().shared_resources().size(); ++r) {
    EXPECT_EQ(capacity.FreeShared(r), fresh.FreeShared(r));
  }
  // Cached on first use: a reused capacity must not keep an earlier cycle's value.
  EXPECT_EQ(capacity.MaxHostSlots(), largest);
  EXPECT_EQ(fresh.MaxHostSlots(), largest);
  EXPECT_EQ(fresh.TotalFree(), total);
  EXPECT_EQ(capacity.TotalFree(), total);
  EXPECT_EQ(state.topology().free_slots(), total);
  EXPECT_EQ(IndexedHosts(fresh), with_free);
  EXPECT_EQ(IndexedHosts(capacity), with_free);
  EXPECT_EQ(capacity.Mark(), 0u);
  EXPECT_EQ(capacity.withheld_since(), 0);
  EXPECT_EQ(capacity.FirstMaybeFree(), fresh.FirstMaybeFree());
  EXPECT_EQ(capacity.SelectCursor(7), fresh.SelectCursor(7));
}

// Claims, rolls back, debits, withholds and moves cursors at random: what a cycle leaves.
void Scribble(Capacity& capacity, const ClusterState& state, std::mt19937_64& rng) {
  capacity.AttributeColumn(state, "type");
  if (capacity.resource_count() > 0 && capacity.host_count() > 0) capacity.Defines(state, 0, 0);
  capacity.SelectCursor(7) = static_cast<HostIndex>(rng() % (capacity.host_count() + 1));
  const size_t mark = capacity.Mark();
  Allocation debit;
  for (HostIndex h = 0; h < capacity.host_count(); ++h) {
    const int32_t free = capacity.FreeSlots(h);
    if (free == 0 || rng() % 3 != 0) continue;
    const int32_t take = 1 + static_cast<int32_t>(rng() % static_cast<uint64_t>(free));
    if (rng() % 2 == 0) {
      capacity.ClaimHost(HostGrant{.host = h, .slots = take});
    } else {
      debit.hosts.push_back(HostGrant{.host = h, .slots = take});
    }
    if (rng() % 5 == 0) capacity.Withhold(h, 99, 5);
  }
  if (rng() % 2 == 0) capacity.Rollback(mark);
  if (rng() % 2 == 0) {
    capacity.Rollback(mark);
    capacity.Debit(debit);
  }
  capacity.FirstMaybeFree();
}

// A random state: hosts spanning several index words, jobs started and finished, hosts
// closed and reopened, now and then a reconfiguration that adds or removes hosts.
TEST(CapacityTest, ResetEqualsAFreshlyBuiltCapacity) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    auto uniform = [&](int lo, int hi) {
      return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
    };
    ClusterConfig config;
    const int hosts = uniform(1, 150);
    for (int h = 0; h < hosts; ++h) {
      HostSpec host{.name = "h" + std::to_string(h), .slots = uniform(1, 4)};
      if (seed % 3 == 0) host.resources["mem"] = uniform(0, 4) * 1000;
      if (h % 7 == 0) host.attributes["type"] = "big";
      config.hosts.push_back(host);
    }
    if (seed % 2 == 0) config.shared_resources["lic"] = 10;
    config.queues.push_back(QueueSpec{.name = "normal"});
    Result<ClusterState> created = ClusterState::Create(config);
    ASSERT_TRUE(created.has_value()) << created.error().ToString();
    ClusterState state = std::move(created).value();

    Capacity recycled;
    std::vector<JobId> running;
    JobId next_id = 1;
    for (int step = 0; step < 300; ++step) {
      const int action = uniform(0, 9);
      if (action <= 4) {  // a job started on random free hosts
        const Job* submitted = nullptr;
        const JobId id = next_id++;
        testing::Submit(state, JobBuilder(id).Submit(step));
        submitted = state.FindJob(id);
        Allocation allocation;
        for (const Host& host : state.topology().hosts()) {
          if (!host.AcceptsWork() || host.FreeSlots() == 0 || rng() % 4 != 0) continue;
          allocation.hosts.push_back(
              HostGrant{.host = host.index, .slots = uniform(1, host.FreeSlots())});
        }
        if (allocation.hosts.empty() || submitted == nullptr) {
          ASSERT_TRUE(Apply(JobCancelled{id}, step, state).ok());
        } else {
          state.Start(id, std::move(allocation), step);
          running.push_back(id);
        }
      } else if (action <= 7 && !running.empty()) {  // a running job finishes
        const size_t at = rng() % running.size();
        ASSERT_TRUE(Apply(JobFinished{running[at], 0}, step, state).ok());
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(at));
      } else if (action == 8) {  // a host changes state
        const HostIndex h = static_cast<HostIndex>(rng() % state.topology().hosts().size());
        const HostState to = static_cast<HostState>(uniform(0, 3));
        ASSERT_TRUE(
            Apply(HostChanged{state.topology().hosts()[h].spec.name, to}, step, state).ok());
      } else if (rng() % 8 == 0) {  // hosts added, and some dropped (busy ones drain)
        ClusterConfig next = config;
        next.hosts.push_back(HostSpec{.name = "n" + std::to_string(step), .slots = uniform(1, 3)});
        next.hosts.erase(std::remove_if(next.hosts.begin(), next.hosts.end(),
                                        [&](const HostSpec&) { return rng() % 10 == 0; }),
                         next.hosts.end());
        ASSERT_TRUE(Apply(ConfigChanged{next}, step, state).ok());
        config = next;
      }
      recycled.Reset(state);
      ExpectFresh(recycled, state);
      if (::testing::Test::HasFailure()) return;
      Scribble(recycled, state, rng);
    }
  }
}

// A Capacity moved out of a workspace and back keeps no contents, only buffers.
TEST(CapacityTest, AResetAfterAMoveIsFresh) {
  ClusterState state = testing::ClusterBuilder().Hosts(70, 2).State();
  Capacity first(state);
  first.ClaimHost(HostGrant{.host = 3, .slots = 2});
  first.Withhold(5, 42, 9);
  Capacity second = std::move(first);
  second.Reset(state);
  ExpectFresh(second, state);
}

// Reset copies the configured slots only when their version changed (HostSlots::
// totals_version): a host resized in place (same hosts, same count) and one Capacity reset
// in turn from two states that differ only in a host's slots (a copy reconfigured) must
// each see their own totals.
TEST(CapacityTest, ResetSeesConfiguredSlotsChangedInPlaceAndAcrossStates) {
  ClusterState original = testing::ClusterBuilder().Hosts(5, 2).State();
  ClusterState resized = original.Clone();  // the same totals under the same version
  ClusterConfig bigger = resized.config();
  bigger.hosts[3].slots = 9;
  ASSERT_TRUE(Apply(ConfigChanged{bigger}, 0, resized).ok());
  ASSERT_EQ(resized.topology().hosts()[3].spec.slots, 9);

  Capacity capacity;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    capacity.Reset(original);
    ExpectFresh(capacity, original);
    EXPECT_EQ(capacity.TotalSlots(3), 2);
    EXPECT_EQ(capacity.MaxHostSlots(), 2);
    capacity.Reset(resized);
    ExpectFresh(capacity, resized);
    EXPECT_EQ(capacity.TotalSlots(3), 9);
    EXPECT_EQ(capacity.MaxHostSlots(), 9);
  }
  // And back in place: the same state shrinks the host again.
  ClusterConfig smaller = resized.config();
  smaller.hosts[3].slots = 1;
  ASSERT_TRUE(Apply(ConfigChanged{smaller}, 1, resized).ok());
  capacity.Reset(resized);
  ExpectFresh(capacity, resized);
  EXPECT_EQ(capacity.TotalSlots(3), 1);
}

// ForEachHostWithFreeFrom visits exactly the hosts from `from` on that have a free slot, in
// host order, and stops when fn says so, whatever claims, rollbacks and debits did to the
// index (first-fit searches on one-slot hosts rely on it to skip full hosts).
TEST(CapacityTest, WalkFromAHostVisitsItsFreeHostsInOrderAndStops) {
  std::mt19937_64 rng(7);
  for (int hosts : {1, 63, 64, 65, 130, 200}) {
    SCOPED_TRACE("hosts " + std::to_string(hosts));
    ClusterState state = testing::ClusterBuilder().Hosts(hosts, 2).State();
    Capacity capacity(state);
    for (int round = 0; round < 12; ++round) {
      if (round % 4 == 0) capacity.Reset(state);
      Scribble(capacity, state, rng);
      std::vector<HostIndex> with_free;
      for (HostIndex h = 0; h < capacity.host_count(); ++h) {
        if (capacity.FreeSlots(h) > 0) with_free.push_back(h);
      }
      for (HostIndex from = 0; from <= capacity.host_count() + 1; ++from) {
        std::vector<HostIndex> want;
        for (HostIndex h : with_free) {
          if (h >= from) want.push_back(h);
        }
        std::vector<HostIndex> got;
        capacity.ForEachHostWithFreeFrom(from, [&](HostIndex h) {
          got.push_back(h);
          return true;
        });
        ASSERT_EQ(got, want) << "from " << from;
        const size_t stop_after = 1 + rng() % 3;
        std::vector<HostIndex> first;
        capacity.ForEachHostWithFreeFrom(from, [&](HostIndex h) {
          first.push_back(h);
          return first.size() < stop_after;
        });
        want.resize(std::min(want.size(), stop_after));
        ASSERT_EQ(first, want) << "from " << from << ", stopping after " << stop_after;
      }
    }
  }
}

}  // namespace
}  // namespace sluice::core
