// Inputs tests/fuzz/agent_protocol_fuzz.cc found, kept as regression tests (issue 19).
#include <gtest/gtest.h>

#include "wire/agent_protocol.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

// A launch by command alone was encoded with `"argv": []`, which the decoder refuses: the
// agent would have refused the whole heartbeat reply.
TEST(AgentProtocolFuzzRegressionTest, ALaunchByCommandAloneSurvivesTheRoundTrip) {
  HeartbeatReply reply{.epoch = 3};
  reply.launch.push_back(Launch{.job = 5, .command = "sleep 1", .account = "nobody"});
  const json body = EncodeHeartbeatReply(reply);
  Result<HeartbeatReply> decoded = DecodeHeartbeatReply(body);
  ASSERT_TRUE(decoded) << decoded.error().message();
  ASSERT_EQ(decoded->launch.size(), 1u);
  EXPECT_EQ(decoded->launch[0].command, "sleep 1");
  EXPECT_TRUE(decoded->launch[0].argv.empty());
  EXPECT_EQ(EncodeHeartbeatReply(*decoded), body);
}

}  // namespace
}  // namespace sluice::wire
