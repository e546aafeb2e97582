// Topology: hosts, queues and resources, what is in use, and reconfiguration planned whole
// before it is applied.
#include "core/model/topology.h"

#include <gtest/gtest.h>

namespace sluice::core {
namespace {

Topology TwoHostsTwoQueues() {
  Topology topology;
  SLUICE_CHECK(
      topology.AddHost(HostSpec{.name = "a", .slots = 4, .resources = {{"mem", 100}}}).ok());
  SLUICE_CHECK(topology.AddHost(HostSpec{.name = "b", .slots = 2}).ok());
  const HostGroups groups = {{"g", {"b", "a", "b"}}};
  SLUICE_CHECK(topology.AddQueue(QueueSpec{.name = "all"}, groups).ok());
  SLUICE_CHECK(topology.AddQueue(QueueSpec{.name = "grouped", .host_group = "g"}, groups).ok());
  topology.SetSharedResources({{"lic", 2}});
  return topology;
}

TEST(TopologyTest, AddHostChecksInOrder) {
  Topology topology = TwoHostsTwoQueues();
  struct Case {
    std::string_view name;
    HostSpec spec;
    StatusCode want;
  };
  const Case cases[] = {
      {"negative slots before duplicate", HostSpec{.name = "a", .slots = -1},
       StatusCode::kInvalidArgument},
      {"duplicate", HostSpec{.name = "a", .slots = 1, .resources = {{"mem", -1}}},
       StatusCode::kAlreadyExists},
      {"negative resource", HostSpec{.name = "c", .resources = {{"mem", -1}}},
       StatusCode::kInvalidArgument},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(topology.AddHost(c.spec).code(), c.want);
  }
  EXPECT_EQ(topology.hosts().size(), 2u);
}

TEST(TopologyTest, QueuesResolveTheirGroupSortedAndUnique) {
  Topology topology = TwoHostsTwoQueues();
  EXPECT_TRUE(topology.queues()[0].all_hosts);
  EXPECT_EQ(topology.queues()[1].hosts, (std::vector<HostIndex>{0, 1}));
  std::vector<HostIndex> visited;
  topology.ForEachHostOf(topology.queues()[1], [&](HostIndex h) { visited.push_back(h); });
  EXPECT_EQ(visited, (std::vector<HostIndex>{0, 1}));
  EXPECT_EQ(topology.AddQueue(QueueSpec{.name = "x", .host_group = "nope"}, {}).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(topology.AddQueue(QueueSpec{.name = "all"}, {}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(topology.AddQueue(QueueSpec{.name = "w", .windows = {"bad"}}, {}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(topology.queues().size(), 2u);
}

TEST(TopologyTest, OccupyAndVacateBalance) {
  Topology topology = TwoHostsTwoQueues();
  const ResourceId mem = *topology.FindHostResource("mem");
  const ResourceId lic = *topology.FindSharedResource("lic");
  Allocation allocation;
  allocation.hosts = {HostGrant{.host = 0, .slots = 3, .resources = {{mem, 60}}},
                      HostGrant{.host = 1, .slots = 2, .whole_host = true}};
  allocation.shared = {ResourceAmount{lic, 1}};
  topology.Occupy(1, allocation);
  EXPECT_EQ(topology.free_slots(), 1);
  EXPECT_EQ(topology.hosts()[0].ResourceFree(mem), 40);
  EXPECT_EQ(topology.SharedUsed(lic), 1);
  EXPECT_EQ(topology.queues()[1].used_slots, 5);
  EXPECT_EQ(topology.queues()[1].running_jobs, 1);
  EXPECT_EQ(topology.host_slots().free, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(topology.host_slots().idle, (std::vector<uint8_t>{0, 0}));
  topology.Vacate(1, allocation);
  EXPECT_EQ(topology.free_slots(), 6);
  EXPECT_EQ(topology.total_slots(), 6);
  EXPECT_EQ(topology.hosts()[0].ResourceFree(mem), 100);
  EXPECT_EQ(topology.SharedUsed(lic), 0);
  EXPECT_EQ(topology.queues()[1].used_slots, 0);
  EXPECT_EQ(topology.host_slots().idle, (std::vector<uint8_t>{1, 1}));
}

TEST(TopologyTest, HostStateMovesFreeSlotsNotTotal) {
  Topology topology = TwoHostsTwoQueues();
  ASSERT_TRUE(topology.SetHostState("a", HostState::kClosed).ok());
  EXPECT_EQ(topology.free_slots(), 2);
  EXPECT_EQ(topology.total_slots(), 6);
  EXPECT_EQ(topology.host_slots().free[0], 0);
  EXPECT_EQ(topology.SetHostState("nope", HostState::kOk).code(), StatusCode::kNotFound);
}

TEST(TopologyTest, PlanGivesNewHostsTheIndicesApplyWill) {
  Topology topology = TwoHostsTwoQueues();
  ClusterConfig config;
  config.hosts = {HostSpec{.name = "c", .slots = 1}, HostSpec{.name = "a", .slots = 4},
                  HostSpec{.name = "d", .slots = 1}};
  config.host_groups = {{"g", {"d", "c"}}};
  config.queues = {QueueSpec{.name = "grouped", .host_group = "g"}};
  Result<Topology::ReconfigurePlan> plan = topology.PlanReconfigure(config);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->queues.size(), 1u);
  EXPECT_EQ(plan->queues[0].hosts, (std::vector<HostIndex>{2, 3}));  // c, d after a, b
  topology.ApplyReconfigure(config, std::move(*plan));
  EXPECT_EQ(*topology.FindHost("c"), 2u);
  EXPECT_EQ(*topology.FindHost("d"), 3u);
  EXPECT_EQ(topology.queues()[1].hosts, (std::vector<HostIndex>{2, 3}));
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kUnavail);  // b was dropped
  EXPECT_FALSE(topology.queues()[0].spec.open);                    // so was "all"
  EXPECT_EQ(topology.default_queue(), 1u);
  EXPECT_EQ(topology.total_slots(), 6);
}

TEST(TopologyTest, PlanChangesNothing) {
  Topology topology = TwoHostsTwoQueues();
  ClusterConfig config;
  config.hosts = {HostSpec{.name = "a", .slots = 8}, HostSpec{.name = "c", .slots = -1}};
  config.queues = {QueueSpec{.name = "all"}};
  EXPECT_EQ(topology.PlanReconfigure(config).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(topology.hosts()[0].spec.slots, 4);
  EXPECT_EQ(topology.hosts().size(), 2u);
  EXPECT_EQ(topology.total_slots(), 6);
}

// --- A host the configuration drops while it runs jobs drains (R-OPS-3, issue 43). ---

// TwoHostsTwoQueues' configuration with `hosts` only (queue "all" over every host).
ClusterConfig OnlyHosts(std::vector<HostSpec> hosts) {
  ClusterConfig config;
  config.hosts = std::move(hosts);
  config.queues = {QueueSpec{.name = "all"}};
  return config;
}

void Reconfigure(Topology& topology, const ClusterConfig& config) {
  Result<Topology::ReconfigurePlan> plan = topology.PlanReconfigure(config);
  ASSERT_TRUE(plan.has_value()) << plan.error().ToString();
  topology.ApplyReconfigure(config, std::move(*plan));
}

// b (2 slots) runs a job on 1 of them.
Topology BusyB(Allocation& allocation) {
  Topology topology = TwoHostsTwoQueues();
  allocation.hosts = {HostGrant{.host = 1, .slots = 1}};
  topology.Occupy(0, allocation);
  return topology;
}

TEST(TopologyTest, ARemovedBusyHostIsKeptClosedAndLeaving) {
  Allocation job;
  Topology topology = BusyB(job);
  Reconfigure(topology, OnlyHosts({HostSpec{.name = "a", .slots = 4}}));
  const Host& b = topology.hosts()[1];
  EXPECT_EQ(b.membership, HostMembership::kLeaving);
  EXPECT_EQ(b.spec.state, HostState::kClosed);
  EXPECT_EQ(b.spec.slots, 2);  // its job keeps what it holds
  EXPECT_EQ(b.used_slots, 1);
  EXPECT_EQ(topology.total_slots(), 6);
  EXPECT_EQ(topology.free_slots(), 4);  // a's only
  EXPECT_EQ(topology.host_slots().free[1], 0);
  EXPECT_EQ(topology.host_slots().accepts_work[1], 0);
  EXPECT_EQ(*topology.FindHost("b"), 1u);
}

TEST(TopologyTest, NothingStartsOnALeavingHost) {
  Allocation job;
  Topology topology = BusyB(job);
  Reconfigure(topology, OnlyHosts({HostSpec{.name = "a", .slots = 4}}));
  // Its agent registers again: the host stays closed.
  ASSERT_TRUE(topology.SetHostState("b", HostState::kOk).ok());
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kClosed);
  EXPECT_FALSE(topology.hosts()[1].AcceptsWork());
  EXPECT_EQ(topology.free_slots(), 4);
  // Its agent is lost: that shows.
  ASSERT_TRUE(topology.SetHostState("b", HostState::kUnavail).ok());
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kUnavail);
  ASSERT_TRUE(topology.SetHostState("b", HostState::kOk).ok());
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kClosed);
  // Another reconfiguration without it changes nothing.
  Reconfigure(topology, OnlyHosts({HostSpec{.name = "a", .slots = 4}}));
  EXPECT_EQ(topology.hosts()[1].membership, HostMembership::kLeaving);
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kClosed);
}

TEST(TopologyTest, TheLastJobEndOfALeavingHostDropsIt) {
  Allocation first;
  Topology topology = BusyB(first);
  Allocation second;
  second.hosts = {HostGrant{.host = 1, .slots = 1}};
  topology.Occupy(0, second);
  Reconfigure(topology, OnlyHosts({HostSpec{.name = "a", .slots = 4}}));
  EXPECT_FALSE(topology.Vacate(0, first));  // one job still runs there
  EXPECT_EQ(topology.hosts()[1].membership, HostMembership::kLeaving);
  EXPECT_TRUE(topology.Vacate(0, second));
  const Host& b = topology.hosts()[1];
  EXPECT_EQ(b.membership, HostMembership::kGone);
  EXPECT_EQ(b.spec.state, HostState::kUnavail);
  EXPECT_EQ(b.spec.slots, 0);
  EXPECT_EQ(topology.total_slots(), 4);
  EXPECT_EQ(topology.free_slots(), 4);
  EXPECT_EQ(topology.host_slots().total[1], 0);
  // Gone, it takes no state but unavail.
  ASSERT_TRUE(topology.SetHostState("b", HostState::kOk).ok());
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kUnavail);
}

TEST(TopologyTest, ALeavingHostListedAgainBeforeItDrainsReopens) {
  Allocation job;
  Topology topology = BusyB(job);
  Reconfigure(topology, OnlyHosts({HostSpec{.name = "a", .slots = 4}}));
  Reconfigure(topology,
              OnlyHosts({HostSpec{.name = "a", .slots = 4}, HostSpec{.name = "b", .slots = 3}}));
  const Host& b = topology.hosts()[1];
  EXPECT_EQ(b.membership, HostMembership::kListed);
  EXPECT_EQ(b.spec.state, HostState::kOk);
  EXPECT_EQ(b.spec.slots, 3);
  EXPECT_EQ(topology.total_slots(), 7);
  EXPECT_EQ(topology.free_slots(), 6);    // 4 on a, 2 on b
  EXPECT_FALSE(topology.Vacate(0, job));  // its job's end leaves it in place
  EXPECT_EQ(topology.hosts()[1].membership, HostMembership::kListed);
  EXPECT_EQ(topology.free_slots(), 7);
}

TEST(TopologyTest, ALeavingHostListedAgainClosedStaysClosed) {
  // The server lists a host an administrator closed as closed (ClusterSettings).
  Allocation job;
  Topology topology = BusyB(job);
  Reconfigure(topology, OnlyHosts({HostSpec{.name = "a", .slots = 4}}));
  Reconfigure(topology,
              OnlyHosts({HostSpec{.name = "a", .slots = 4},
                         HostSpec{.name = "b", .slots = 2, .state = HostState::kClosed}}));
  EXPECT_EQ(topology.hosts()[1].membership, HostMembership::kListed);
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kClosed);
  EXPECT_FALSE(topology.Vacate(0, job));
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kClosed);
  EXPECT_EQ(topology.hosts()[1].spec.slots, 2);
}

TEST(TopologyTest, ARemovedIdleHostIsGoneAtOnceAndMayComeBack) {
  Topology topology = TwoHostsTwoQueues();
  Reconfigure(topology, OnlyHosts({HostSpec{.name = "a", .slots = 4}}));
  EXPECT_EQ(topology.hosts()[1].membership, HostMembership::kGone);
  EXPECT_EQ(topology.hosts()[1].spec.state, HostState::kUnavail);
  EXPECT_EQ(topology.hosts()[1].spec.slots, 0);
  EXPECT_EQ(topology.total_slots(), 4);
  // Its agent adds it again (auth.allow_dynamic_hosts): the same index.
  ASSERT_TRUE(topology.AddHost(HostSpec{.name = "b", .slots = 5}).ok());
  EXPECT_EQ(topology.hosts().size(), 2u);
  EXPECT_EQ(topology.hosts()[1].membership, HostMembership::kListed);
  EXPECT_EQ(topology.hosts()[1].spec.slots, 5);
  EXPECT_EQ(topology.total_slots(), 9);
  EXPECT_EQ(topology.AddHost(HostSpec{.name = "b", .slots = 5}).code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace sluice::core
