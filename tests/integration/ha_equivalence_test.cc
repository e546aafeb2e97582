// Restart equivalence across stores (R-HA-3): the same workload on one controller with the
// SQLite store and on two controllers with the etcd store, the leader SIGKILLed in the
// middle, ends with the same job states and exit codes, and the jobs started in the same
// order (each job appends its id to a file when it starts; one slot: one job at a time).
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <string>
#include <vector>

#include "integration/cluster_harness.h"
#include "integration/ha_harness.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

const char* kHostsAndQueues = R"(hosts:
  - name: h1
    slots: 1
queues:
  - name: high
    policy: fifo
    priority: 20
  - name: low
    policy: fifo
    priority: 10
)";

constexpr int kJobs = 10;

// Alternating queues, every fourth job fails: the order is decided by the queues' priorities
// and the sequence, which the store must keep.
json Workload(const fs::path& order) {
  json jobs = json::array();
  for (int i = 0; i < kJobs; ++i) {
    const std::string exit = i % 4 == 3 ? "3" : "0";
    jobs.push_back(
        {{"queue", i % 2 == 0 ? "low" : "high"},
         {"command", "echo $SLUICE_JOB_ID >> " + order.string() + "; sleep 0.3; exit " + exit}});
  }
  return {{"jobs", jobs}};
}

struct Outcome {
  std::vector<int64_t> order;
  std::map<int64_t, std::string> ends;  // id -> "STATE exit"
};

std::map<int64_t, std::string> Ends(const json& jobs) {
  std::map<int64_t, std::string> ends;
  if (!jobs.is_array()) return ends;
  for (const json& j : jobs) {
    ends[j["id"].get<int64_t>()] =
        j.value("state", "") + " " + (j["exit_code"].is_null() ? "-" : j["exit_code"].dump());
  }
  return ends;
}

bool Ended(const std::map<int64_t, std::string>& ends) {
  if (ends.size() != kJobs) return false;
  for (const auto& [id, end] : ends) {
    if (!end.starts_with("DONE") && !end.starts_with("EXIT")) return false;
  }
  return true;
}

TEST(HaEquivalenceTest, SqliteAndEtcdWithAFailoverEndAlike) {
  Outcome sqlite;
  {
    Cluster c(DefaultClusterYaml(kHostsAndQueues));
    std::string error;
    ASSERT_TRUE(c.StartServer(&error)) << error;
    c.StartAgent("h1", 1);
    ASSERT_TRUE(Eventually([&] { return c.HostState("h1") == "ok"; }, 20s)) << c.Logs();
    const fs::path order = c.dir() / "order.txt";
    ASSERT_TRUE(c.Post("/v1/jobs/batch", Workload(order)).is_object()) << c.Logs();
    ASSERT_TRUE(Eventually([&] { return Ended(Ends(c.Get("/v1/jobs"))); }, 60s)) << c.Logs();
    sqlite = {ReadIds(order), Ends(c.Get("/v1/jobs"))};
  }
  Outcome etcd;
  {
    std::string error;
    auto c = HaCluster::Start({.controllers = 2,
                               .agents = 1,
                               .slots = 1,
                               .leader_lease_seconds = 1,
                               .yaml = DefaultClusterYaml(kHostsAndQueues)},
                              error);
    if (!c && testing::EtcdCluster::Unavailable()) GTEST_SKIP() << error;
    ASSERT_TRUE(c) << error;
    const fs::path order = c->dir() / "order.txt";
    ASSERT_TRUE(c->Post("/v1/jobs/batch", Workload(order)).is_object()) << c->Logs();
    // The leader dies with jobs ended, one running and the rest waiting.
    ASSERT_TRUE(Eventually([&] { return ReadIds(order).size() >= 4; }, 30s)) << c->Logs();
    const int leader = c->Leader();
    ASSERT_GE(leader, 0);
    c->KillController(leader, SIGKILL);
    ASSERT_GE(c->WaitLeader(20s), 0) << c->Logs();
    ASSERT_TRUE(Eventually([&] { return Ended(Ends(c->Get("/v1/jobs"))); }, 60s)) << c->Logs();
    etcd = {ReadIds(order), Ends(c->Get("/v1/jobs"))};
  }
  EXPECT_EQ(sqlite.order.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(sqlite.order, etcd.order);
  EXPECT_EQ(sqlite.ends, etcd.ends);
}

}  // namespace
}  // namespace sluice::integration
