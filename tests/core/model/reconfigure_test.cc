// ClusterState::Reconfigure validates and plans the whole configuration before it changes
// anything: a refused configuration leaves every observable part of the state as it was.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/cycle/events.h"
#include "core/model/cluster_state.h"
#include "testing/builders.h"

namespace sluice::core {
namespace {

using testing::ClusterBuilder;
using testing::JobBuilder;
using testing::Submit;
using testing::SubmitRunning;

// Everything a caller can read of the state's hosts, queues, resources and jobs, as text.
std::string Snapshot(const ClusterState& state) {
  std::ostringstream out;
  out << "total " << state.topology().total_slots() << " free " << state.topology().free_slots()
      << " default " << state.topology().default_queue() << "\n";
  for (const Host& h : state.topology().hosts()) {
    out << "host " << h.index << " " << h.spec.name << " slots " << h.spec.slots << " "
        << ToString(h.spec.state) << " used " << h.used_slots << " jobs " << h.running_jobs;
    for (const auto& [name, amount] : h.spec.resources) out << " " << name << "=" << amount;
    for (size_t r = 0; r < h.resource_total.size(); ++r)
      out << " t" << r << "=" << h.resource_total[r];
    out << "\n";
  }
  const HostSlots& slots = state.topology().host_slots();
  for (size_t h = 0; h < slots.free.size(); ++h) {
    out << "slots " << h << " " << slots.free[h] << "/" << slots.total[h] << " "
        << int{slots.accepts_work[h]} << int{slots.idle[h]} << "\n";
  }
  for (const Queue& q : state.topology().queues()) {
    out << "queue " << q.index << " " << q.spec.name << " open " << q.spec.open << " active "
        << q.spec.active << " group '" << q.spec.host_group << "' all " << q.all_hosts
        << " running " << q.running_jobs << " used " << q.used_slots << " hosts";
    for (HostIndex h : q.hosts) out << " " << h;
    out << " pending";
    for (const PendingEntry& e : q.pending) out << " " << e.job->spec.id;
    out << " windows " << state.topology().WindowsOf(q.index).always_open() << "\n";
  }
  for (const std::string& r : state.topology().host_resources())
    out << "host resource " << r << "\n";
  for (ResourceId r = 0; r < state.topology().shared_resources().size(); ++r) {
    out << "shared " << state.topology().shared_resources()[r] << " "
        << state.topology().SharedTotal(r) << "\n";
  }
  const ClusterConfig& config = state.config();
  out << "config hosts " << config.hosts.size() << " queues " << config.queues.size() << " limits "
      << config.limits.size() << " default '" << config.default_queue << "'\n";
  out << "unclassified " << state.unclassified().size() << " running " << state.running().size()
      << "\n";
  return out.str();
}

// h1 (4 slots, runs job 1 on 2), h2 (4 slots); queues q1 (every host) and q2 (group g = h2);
// job 2 waits in q1; a license.
ClusterState Busy() {
  ClusterConfig config = ClusterBuilder()
                             .Host("h1", 4)
                             .Host("h2", 4)
                             .Shared("lic", 3)
                             .Queue(QueueSpec{.name = "q1"})
                             .Queue(QueueSpec{.name = "q2", .host_group = "g"})
                             .Config();
  config.host_groups["g"] = {"h2"};
  Result<ClusterState> state = ClusterState::Create(config);
  SLUICE_CHECK(state.has_value());
  SubmitRunning(*state, JobBuilder(1).Tasks(2).Queue("q1"), 0);
  Submit(*state, JobBuilder(2).Tasks(8).Queue("q1"));
  state->MarkClassified();
  return std::move(state).value();
}

TEST(ReconfigureTest, ARefusedConfigurationChangesNothing) {
  struct Case {
    std::string_view name;
    void (*edit)(ClusterConfig&);
    StatusCode want;
  };
  const Case cases[] = {
      // Both of these failed half-way before: h1 had already grown (and h3 was added) when the
      // bad new host was reached.
      {"a new host with negative slots after a change",
       [](ClusterConfig& c) {
         c.hosts[0].slots = 8;
         c.hosts.push_back(HostSpec{.name = "h3", .slots = 2});
         c.hosts.push_back(HostSpec{.name = "h4", .slots = -1});
       },
       StatusCode::kInvalidArgument},
      {"a new host with a negative resource after a change",
       [](ClusterConfig& c) {
         c.hosts[1].resources["mem"] = 64;
         c.shared_resources["lic"] = 5;
         c.hosts.push_back(HostSpec{.name = "h3", .slots = 2, .resources = {{"gpu", -2}}});
       },
       StatusCode::kInvalidArgument},
      {"a removed queue with a job",
       [](ClusterConfig& c) {
         c.queues.push_back(QueueSpec{.name = "q3"});
         c.queues.erase(c.queues.begin());
       },
       StatusCode::kFailedPrecondition},
      {"a queue naming an unknown group",
       [](ClusterConfig& c) {
         c.hosts.push_back(HostSpec{.name = "h3", .slots = 2});
         c.queues[1].host_group = "nope";
       },
       StatusCode::kNotFound},
      {"a group naming a host the config drops",
       [](ClusterConfig& c) {
         c.hosts.pop_back();
         c.host_groups["g"] = {"h2"};
       },
       StatusCode::kNotFound},
      {"bad windows",
       [](ClusterConfig& c) {
         c.hosts.push_back(HostSpec{.name = "h3", .slots = 2});
         c.queues[0].windows = {"25:00-26:00"};
       },
       StatusCode::kInvalidArgument},
      {"a kept host below its slots in use",
       [](ClusterConfig& c) {
         c.hosts.push_back(HostSpec{.name = "h3", .slots = 2});
         c.hosts[0].slots = 1;
       },
       StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ClusterState state = Busy();
    const std::string before = Snapshot(state);
    ClusterConfig config = state.config();
    c.edit(config);
    EXPECT_EQ(state.Reconfigure(config).code(), c.want);
    EXPECT_EQ(Snapshot(state), before);
    EXPECT_TRUE(state.FindJob(2)->classified);  // not queued for classification again
  }
}

TEST(ReconfigureTest, ARefusedConfigurationLeavesTheStateUsable) {
  ClusterState state = Busy();
  ClusterConfig bad = state.config();
  bad.hosts[0].slots = 8;
  bad.hosts.push_back(HostSpec{.name = "h3", .slots = -1});
  ASSERT_FALSE(state.Reconfigure(bad).ok());
  ClusterConfig good = state.config();
  good.hosts.push_back(HostSpec{.name = "h3", .slots = 2});
  ASSERT_TRUE(state.Reconfigure(good).ok());
  EXPECT_EQ(state.topology().total_slots(), 10);
  EXPECT_EQ(state.topology().hosts()[2].spec.name, "h3");
  EXPECT_EQ(state.unclassified().size(), 1u);  // job 2
}

TEST(ReconfigureTest, AnAcceptedConfigurationIsAppliedWhole) {
  ClusterState state = Busy();
  ClusterConfig config = state.config();
  config.hosts[0].slots = 6;
  config.hosts.erase(config.hosts.begin() + 1);                // h2 goes
  config.hosts.push_back(HostSpec{.name = "h3", .slots = 2});  // h3 comes
  config.host_groups["g"] = {"h3"};
  config.shared_resources.clear();
  config.queues.push_back(QueueSpec{.name = "q3", .host_group = "g"});
  config.default_queue = "q3";
  ASSERT_TRUE(state.Reconfigure(config).ok());
  EXPECT_EQ(state.topology().total_slots(), 8);
  EXPECT_EQ(state.topology().free_slots(), 6);
  EXPECT_EQ(state.topology().hosts()[1].spec.state, HostState::kUnavail);
  EXPECT_EQ(state.topology().hosts()[1].spec.slots, 0);
  EXPECT_EQ(state.topology().queues()[1].hosts, std::vector<HostIndex>{2});
  EXPECT_EQ(state.topology().queues()[2].hosts, std::vector<HostIndex>{2});
  EXPECT_EQ(state.topology().default_queue(), 2u);
  EXPECT_EQ(state.topology().SharedTotal(*state.topology().FindSharedResource("lic")), 0);
  EXPECT_EQ(state.config().queues.size(), 3u);
}

}  // namespace
}  // namespace sluice::core
