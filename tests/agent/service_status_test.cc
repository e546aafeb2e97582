// The STATUS= line of `sluice agent` (agent/service_status.h).
#include "agent/service_status.h"

#include <gtest/gtest.h>

namespace sluice::agent {
namespace {

TEST(AgentServiceStatusTest, SaysWhereTheAgentStandsWithItsController) {
  struct Case {
    std::string_view name;
    AgentFacts facts;
    std::string line;
  };
  const std::string server = "http://c1:8740,http://c2:8740";
  const Case cases[] = {
      {"starting", {.server = server}, "registering with " + server},
      {"controller down",
       {.server = server, .unreachable = "http://c1:8740: Connection refused"},
       "registering: cannot reach the controller at http://c1:8740: Connection refused"},
      {"registered",
       {.server = server,
        .leader_url = "http://c2:8740",
        .registered = true,
        .connected = true,
        .epoch = 3,
        .running = 2},
       "registered with http://c2:8740 (epoch 3); 2 jobs running"},
      {"registered, then cut off",
       {.server = server,
        .leader_url = "",
        .registered = true,
        .connected = false,
        .epoch = 3,
        .unreachable = "http://c2:8740: Read timeout",
        .running = 1},
       "registered (epoch 3), cannot reach the controller at http://c2:8740: Read timeout; 1 "
       "jobs running"},
      {"fenced",
       {.server = server, .registered = true, .fenced = true, .epoch = 3},
       "fenced: no controller answered within the absence allowed, jobs were ended; 0 jobs "
       "running; retrying"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(AgentStatusLine(c.facts), c.line);
  }
}

}  // namespace
}  // namespace sluice::agent
