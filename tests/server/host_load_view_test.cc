// GET /v1/hosts shows each host's load as its agent last reported it (issue 47.9): null until
// a heartbeat carries one, then the averages and the available memory.
#include <gtest/gtest.h>

#include "server/controller_fixture.h"

namespace sluice::server {
namespace {

using nlohmann::json;
using testing::ControllerHarness;

TEST(HostLoadViewTest, HostsShowTheLoadTheirAgentsReport) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  ASSERT_EQ(h.Register("h2").status, 200);
  const auto host = [&](const std::string& name) {
    const json hosts = Reply(h.c().Hosts()).body;
    for (const json& x : hosts) {
      if (x["name"] == name) return x;
    }
    return json();
  };
  EXPECT_TRUE(host("h1")["load"].is_null());
  const Reply r = h.c().Heartbeat(
      "h1", {{"epoch", h.c().epoch()},
             {"wait_ms", 0},
             {"running", json::array()},
             {"load", {{"r1m", 3.5}, {"r5m", 2.0}, {"r15m", 1.25}, {"mem_available_mb", 4096}}}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const json load = host("h1")["load"];
  EXPECT_EQ(load, json({{"r1m", 3.5}, {"r5m", 2.0}, {"r15m", 1.25}, {"mem_available_mb", 4096}}));
  EXPECT_TRUE(host("h2")["load"].is_null());  // its agent has not reported one

  // A heartbeat without a load (an older agent) keeps the last one; unknown memory is null.
  h.Heartbeat("h1");
  EXPECT_EQ(host("h1")["load"], load);
  const Reply unknown_memory = h.c().Heartbeat(
      "h1", {{"epoch", h.c().epoch()},
             {"wait_ms", 0},
             {"load", {{"r1m", 0}, {"r5m", 0}, {"r15m", 0}, {"mem_available_mb", -1}}}});
  ASSERT_EQ(unknown_memory.status, 200) << unknown_memory.body.dump();
  EXPECT_TRUE(host("h1")["load"]["mem_available_mb"].is_null());
}

// A host's part of a batched heartbeat means what its single heartbeat means: its load too.
TEST(HostLoadViewTest, ABatchedHeartbeatCarriesEachHostsLoad) {
  sluice::testing::TempDir dir;
  ControllerHarness h(dir.path().string());
  h.Open();
  ASSERT_EQ(h.Register("h1").status, 200);
  const json load = {{"r1m", 7.0}, {"r5m", 6.0}, {"r15m", 5.0}, {"mem_available_mb", 100}};
  const Reply r = h.c().HeartbeatBatch(
      {{"wait_ms", 0},
       {"hosts",
        {{{"name", "h1"}, {"heartbeat", {{"epoch", h.c().epoch()}, {"load", load}}}}}}});
  ASSERT_EQ(r.status, 200) << r.body.dump();
  const json hosts = Reply(h.c().Hosts()).body;
  ASSERT_EQ(hosts.size(), 2u);  // h1 and h2, as configured
  EXPECT_EQ(hosts[0]["name"], "h1");
  EXPECT_EQ(hosts[0]["load"], load);
  EXPECT_TRUE(hosts[1]["load"].is_null());
}

}  // namespace
}  // namespace sluice::server
