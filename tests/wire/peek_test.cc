// The peek messages of the agent protocol (R-UX-5): round trips, strict decoding, UTF-8.
#include "wire/peek.h"

#include <gtest/gtest.h>

#include "wire/agent_protocol.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

TEST(PeekWireTest, OrdersAndResultsRoundTripInHeartbeats) {
  HeartbeatReply reply{.epoch = 2};
  reply.peek.push_back({.id = 1, .job = 7, .lines = 20});
  reply.peek.push_back({.id = 2, .job = 7, .lines = 10, .offset = 4096});
  Result<HeartbeatReply> back = DecodeHeartbeatReply(EncodeHeartbeatReply(reply));
  ASSERT_TRUE(back.has_value()) << back.error().message();
  ASSERT_EQ(back->peek.size(), 2u);
  EXPECT_EQ(back->peek[0].lines, 20);
  EXPECT_FALSE(back->peek[0].offset.has_value());
  EXPECT_EQ(back->peek[1].offset, 4096);

  HeartbeatRequest request{.epoch = 2};
  request.peeks.push_back({.id = 1, .job = 7, .text = "a\nb\n", .offset = 10, .size = 14});
  request.peeks.push_back({.id = 2, .job = 7, .error = "job 7 does not run on this host"});
  Result<HeartbeatRequest> decoded = DecodeHeartbeat(EncodeHeartbeat(request));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  ASSERT_EQ(decoded->peeks.size(), 2u);
  EXPECT_EQ(decoded->peeks[0].text, "a\nb\n");
  EXPECT_EQ(decoded->peeks[0].size, 14);
  EXPECT_EQ(decoded->peeks[1].error, "job 7 does not run on this host");
}

TEST(PeekWireTest, MalformedEntriesNameTheField) {
  EXPECT_FALSE(DecodePeekOrder(json{{"job", 1}}, "peek[0]").has_value());
  EXPECT_FALSE(DecodePeekOrder(json{{"id", 1}, {"job", "x"}}, "peek[0]").has_value());
  EXPECT_FALSE(DecodePeekOrder(json{{"id", 1}, {"job", 1}, {"offset", -1}}, "peek[0]").has_value());
  Result<PeekOrder> clamped = DecodePeekOrder(json{{"id", 1}, {"job", 1}, {"lines", 1 << 30}}, "p");
  ASSERT_TRUE(clamped.has_value());
  EXPECT_EQ(clamped->lines, kMaxPeekLines);
  EXPECT_FALSE(DecodeHeartbeat(json{{"peeks", "no"}}).has_value());
  EXPECT_FALSE(DecodeHeartbeat(json{{"peeks", json::array({{{"id", 1}}})}}).has_value());
}

TEST(PeekWireTest, InvalidUtf8IsReplaced) {
  EXPECT_EQ(ValidUtf8("plain"), "plain");
  EXPECT_EQ(ValidUtf8("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(ValidUtf8("a\xFF"
                      "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ValidUtf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // cut in the middle
  EXPECT_EQ(ValidUtf8("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_NO_THROW(json(ValidUtf8("\x80\x81\xFE")).dump());
}

}  // namespace
}  // namespace sluice::wire
