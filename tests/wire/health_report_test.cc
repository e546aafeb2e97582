// The health check on the agent protocol (wire/health_report.h): each message that carries it
// gives it back after encoding then decoding, a reply without it leaves the agent's check as it
// is, and hostile values are refused by field.
#include "wire/health_report.h"

#include <gtest/gtest.h>

#include <string>

#include "wire/agent_protocol.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

const core::HealthCheck kCheck{.program = "/usr/sbin/nhc", .interval = 300, .timeout = 60};
const HealthReport kFailed{.ok = false, .message = "ERROR: nhc: Health check failed: x"};

TEST(HealthReportTest, RequestsCarryTheResult) {
  Result<RegisterRequest> reg =
      DecodeRegister(EncodeRegister({.host = {.name = "h1"}, .health = kFailed}));
  ASSERT_TRUE(reg) << reg.error().ToString();
  EXPECT_EQ(reg->health, kFailed);
  Result<HeartbeatRequest> beat = DecodeHeartbeat(EncodeHeartbeat({.health = kFailed}));
  ASSERT_TRUE(beat) << beat.error().ToString();
  EXPECT_EQ(beat->health, kFailed);
  beat = DecodeHeartbeat(EncodeHeartbeat({}));
  ASSERT_TRUE(beat) << beat.error().ToString();
  EXPECT_EQ(beat->health, std::nullopt);
}

TEST(HealthReportTest, RepliesCarryTheCheckAndAbsenceMeansUnchanged) {
  Result<RegisterReply> reg = DecodeRegisterReply(EncodeRegisterReply({.health_check = kCheck}));
  ASSERT_TRUE(reg) << reg.error().ToString();
  EXPECT_EQ(reg->health_check, kCheck);
  Result<HeartbeatReply> beat =
      DecodeHeartbeatReply(EncodeHeartbeatReply({.health_check = kCheck}));
  ASSERT_TRUE(beat) << beat.error().ToString();
  EXPECT_EQ(beat->health_check, std::optional<std::optional<core::HealthCheck>>(kCheck));
  beat = DecodeHeartbeatReply(
      EncodeHeartbeatReply({.health_check = std::optional<core::HealthCheck>()}));
  ASSERT_TRUE(beat) << beat.error().ToString();
  ASSERT_TRUE(beat->health_check.has_value());  // null: none
  EXPECT_EQ(*beat->health_check, std::nullopt);
  beat = DecodeHeartbeatReply(EncodeHeartbeatReply({}));
  ASSERT_TRUE(beat) << beat.error().ToString();
  EXPECT_FALSE(beat->health_check.has_value());  // absent: unchanged
}

TEST(HealthReportTest, HostileValuesAreRefusedByField) {
  EXPECT_FALSE(DecodeHealthReport({{"ok", false}, {"message", std::string(300, 'x')}}));
  EXPECT_FALSE(DecodeHealthReport({{"ok", false}, {"message", "\xff"}}));
  EXPECT_FALSE(DecodeHealthReport({{"ok", 1}}));
  EXPECT_FALSE(DecodeHealthReport({{"ok", true}, {"extra", 1}}));
  EXPECT_FALSE(DecodeHealthCheck({{"program", "nhc"}}));
  EXPECT_FALSE(DecodeHealthCheck({{"program", "/a"}, {"interval", 0}}));
  EXPECT_FALSE(DecodeHealthCheck({{"program", "/a"}, {"timeout", -1}}));
  EXPECT_FALSE(DecodeHealthCheck(json::array()));
}

TEST(HealthReportTest, ClippingKeepsCharactersWholeAndTextPrintable) {
  EXPECT_EQ(ClipHealthMessage("a\tb\nc"), "a b c");
  EXPECT_EQ(ClipHealthMessage("x\xff"), "x?");
  const std::string clipped = ClipHealthMessage(std::string(255, 'a') + "\xc3\xa9");
  EXPECT_EQ(clipped, std::string(255, 'a'));  // the 2-byte character does not fit
}

}  // namespace
}  // namespace sluice::wire
