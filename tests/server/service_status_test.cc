// The STATUS= line of `sluice server` (server/service_status.h).
#include "server/service_status.h"

#include <gtest/gtest.h>

namespace sluice::server {
namespace {

TEST(ServiceStatusTest, SaysTheRoleAndWhatTheClusterDoes) {
  struct Case {
    std::string_view name;
    ServiceFacts facts;
    std::string line;
  };
  const ServiceFacts cluster{.hosts = 4, .hosts_ok = 3, .running = 2, .pending = 5, .held = 1};
  ServiceFacts serving = cluster;
  serving.role = "serving";
  ServiceFacts leader = cluster;
  leader.role = "leader";
  leader.epoch = 7;
  ServiceFacts lapsed = leader;
  lapsed.role = "candidate";
  const Case cases[] = {
      {"state directory", serving,
       "serving: 3 of 4 hosts accept work; 2 jobs running, 5 pending, 1 held"},
      {"leader", leader,
       "leader (epoch 7): 3 of 4 hosts accept work; 2 jobs running, 5 pending, 1 held"},
      {"lapsed lead", lapsed,
       "candidate (epoch 7): 3 of 4 hosts accept work; 2 jobs running, 5 pending, 1 held"},
      {"standby",
       {.role = "standby", .leader = "http://c1:8740"},
       "standby: following the leader at http://c1:8740"},
      {"standby without a leader", {.role = "standby"}, "standby: no leader elected yet"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ServiceStatusLine(c.facts), c.line);
  }
}

}  // namespace
}  // namespace sluice::server
