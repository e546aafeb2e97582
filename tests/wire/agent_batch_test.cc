// The batched heartbeat's messages (wire/agent_batch.h): round trip and strict decoding.
#include "wire/agent_batch.h"

#include <gtest/gtest.h>

namespace sluice::wire {
namespace {

using nlohmann::json;

TEST(AgentBatchTest, EncodeThenDecodeGivesTheRequestBack) {
  BatchHeartbeatRequest request{.wait_ms = 250};
  request.hosts.emplace_back("vh1",
                             HeartbeatRequest{.epoch = 2, .running = {4, 5}, .instance = "abc"});
  request.hosts.emplace_back("vh2", HeartbeatRequest{.exited = {{.job = 9, .exit_code = 1}}});
  Result<BatchHeartbeatRequest> decoded = DecodeBatchHeartbeat(EncodeBatchHeartbeat(request));
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded->wait_ms, 250);
  ASSERT_EQ(decoded->hosts.size(), 2u);
  EXPECT_EQ(decoded->hosts[0].first, "vh1");
  EXPECT_EQ(decoded->hosts[0].second.running, (std::set<int64_t>{4, 5}));
  EXPECT_EQ(decoded->hosts[0].second.instance, "abc");
  ASSERT_EQ(decoded->hosts[1].second.exited.size(), 1u);
  EXPECT_EQ(decoded->hosts[1].second.exited[0].exit_code, 1);
}

TEST(AgentBatchTest, PolledHostsTravelByNameWithTheInstance) {
  BatchHeartbeatRequest request{.wait_ms = 10, .poll = {"vh2", "vh3"}, .instance = "abc"};
  request.hosts.emplace_back("vh1", HeartbeatRequest{});
  Result<BatchHeartbeatRequest> decoded = DecodeBatchHeartbeat(EncodeBatchHeartbeat(request));
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_EQ(decoded->poll, (std::vector<std::string>{"vh2", "vh3"}));
  EXPECT_EQ(decoded->instance, "abc");
  // A host both reports and polls: refused.
  json twice = EncodeBatchHeartbeat(request);
  twice["poll"].push_back("vh1");
  EXPECT_FALSE(DecodeBatchHeartbeat(twice));
  EXPECT_FALSE(DecodeBatchHeartbeat(json{{"hosts", json::array()}, {"poll", {7}}}));
}

TEST(AgentBatchTest, BadRequestsAreRefusedNamingTheEntry) {
  struct Case {
    std::string_view name;
    json body;
  };
  const Case cases[] = {
      {"not an object", json::array()},
      {"no hosts", json{{"wait_ms", 1}}},
      {"unknown field", json{{"hosts", json::array()}, {"x", 1}}},
      {"host without name", json{{"hosts", {{{"heartbeat", json::object()}}}}}},
      {"twice", json{{"hosts",
                      {{{"name", "a"}, {"heartbeat", json::object()}},
                       {{"name", "a"}, {"heartbeat", json::object()}}}}}},
      {"bad heartbeat", json{{"hosts", {{{"name", "a"}, {"heartbeat", {{"running", "7"}}}}}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<BatchHeartbeatRequest> decoded = DecodeBatchHeartbeat(c.body);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().code(), StatusCode::kInvalidArgument);
  }
}

TEST(AgentBatchTest, RepliesDecodePerHost) {
  const json body = {{"epoch", 4},
                     {"hosts",
                      {{{"name", "a"},
                        {"status", 200},
                        {"reply", {{"epoch", 4}, {"ack", {3}}, {"launch", json::array()}}}},
                       {{"name", "b"}, {"status", 404}, {"error", "register first"}}}}};
  Result<BatchHeartbeatReply> reply = DecodeBatchHeartbeatReply(body);
  ASSERT_TRUE(reply) << reply.error().message();
  ASSERT_EQ(reply->hosts.size(), 2u);
  EXPECT_EQ(reply->hosts[0].reply.ack, std::vector<int64_t>{3});
  EXPECT_EQ(reply->hosts[1].status, 404);
  EXPECT_FALSE(DecodeBatchHeartbeatReply(json{{"hosts", {{{"name", "a"}}}}}));
}

// A compact request asks the controller to leave out the empty answers: the flag round-trips
// and must be a boolean.
TEST(AgentBatchTest, CompactTravelsAsABoolean) {
  BatchHeartbeatRequest request{.wait_ms = 10, .compact = true};
  Result<BatchHeartbeatRequest> decoded = DecodeBatchHeartbeat(EncodeBatchHeartbeat(request));
  ASSERT_TRUE(decoded) << decoded.error().message();
  EXPECT_TRUE(decoded->compact);
  EXPECT_FALSE(DecodeBatchHeartbeat(EncodeBatchHeartbeat({}))->compact);
  EXPECT_FALSE(DecodeBatchHeartbeat(json{{"hosts", json::array()}, {"compact", 1}}));
}

// The entries of a reply are matched to the hosts sent in one walk: a host left out gets
// nullptr (its empty answer), an entry of a host not sent is ignored.
TEST(AgentBatchTest, RepliesMatchTheSentHostsWithGaps) {
  BatchHeartbeatReply reply{.epoch = 3};
  for (const char* name : {"b", "zz", "d", "e"}) reply.hosts.push_back({.name = name});
  const std::vector<std::string_view> sent = {"a", "b", "c", "d", "e", "f"};
  std::vector<const BatchHostReply*> matched = MatchBatchReply(reply, sent);
  ASSERT_EQ(matched.size(), sent.size());
  EXPECT_EQ(matched[0], nullptr);
  EXPECT_EQ(matched[1], &reply.hosts[0]);
  EXPECT_EQ(matched[2], nullptr);
  EXPECT_EQ(matched[3], &reply.hosts[2]);
  EXPECT_EQ(matched[4], &reply.hosts[3]);
  EXPECT_EQ(matched[5], nullptr);
  // Every host listed: each its own entry.
  BatchHeartbeatReply full;
  for (const char* name : {"a", "b"}) full.hosts.push_back({.name = name});
  matched = MatchBatchReply(full, {"a", "b"});
  EXPECT_EQ(matched[0], &full.hosts[0]);
  EXPECT_EQ(matched[1], &full.hosts[1]);
}

}  // namespace
}  // namespace sluice::wire
