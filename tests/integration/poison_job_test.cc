// Poison jobs (issue 19): one user's jobs whose launch fails with an enormous message (a
// 600 KB output path) made every heartbeat of the host exceed the controller's 1 MiB body
// limit; the heartbeats were refused for ever, silently, and the host lost its lease. Now
// reports are bounded (agent/report_budget.h): the host stays up, other jobs run, and the
// failures reach the controller (cut to 4 KiB).
#include <gtest/gtest.h>

#include "integration/cluster_harness.h"

namespace sluice::integration {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

TEST(PoisonJobTest, HugeLaunchFailuresDoNotTakeTheHostDown) {
  Cluster cluster(DefaultClusterYaml(R"(hosts:
  - {name: p1, slots: 2}
queues:
  - {name: normal}
)"));
  std::string error;
  ASSERT_TRUE(cluster.StartServer(&error, {"--lease-seconds", "2", "--max-dispatch-attempts", "1"}))
      << error;
  cluster.StartAgent("p1", 2);
  ASSERT_TRUE(Eventually([&] { return cluster.HostState("p1") == "ok"; }, 20s)) << cluster.Logs();
  const std::string path =
      "/nonexistent/" + std::string(300'000, 'p') + "/" + std::string(300'000, 'q');
  std::vector<int64_t> poison;
  for (int i = 0; i < 2; ++i) {
    int status = 0;
    json reply =
        cluster.Post("/v1/jobs", {{"command", "true"}, {"output", path}}, "alice-token", &status);
    ASSERT_EQ(status, 201) << reply.dump().substr(0, 200);
    poison.push_back(reply["id"].get<int64_t>());
  }
  // Both fail at launch (one try: EXIT) and the failure, cut, reaches the controller.
  ASSERT_TRUE(cluster.WaitAllEnded(poison, 30s)) << cluster.Logs().substr(0, 4000);
  for (int64_t id : poison) EXPECT_EQ(cluster.JobState(id), "EXIT");
  // The host kept its lease: a healthy job runs there.
  int status = 0;
  json ok = cluster.Post("/v1/jobs", {{"command", "true"}}, "alice-token", &status);
  ASSERT_EQ(status, 201);
  const int64_t id = ok["id"].get<int64_t>();
  ASSERT_TRUE(cluster.WaitAllEnded({id}, 30s)) << cluster.Logs().substr(0, 4000);
  EXPECT_EQ(cluster.JobState(id), "DONE");
  EXPECT_EQ(cluster.HostState("p1"), "ok");
  EXPECT_EQ(cluster.Logs().find("HEARTBEAT REFUSED"), std::string::npos);
}

}  // namespace
}  // namespace sluice::integration
