// The CLI's submissions carry an Idempotency-Key (issue 19), the same for every attempt of a
// call, and a submission whose reply was lost is sent again (a plain POST is not).
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "client/rest_client.h"
#include "testing/reply_gate.h"
#include "testing/wait.h"

namespace sluice::client {
namespace {

using nlohmann::json;

// A server whose first answer is lost: it is held until the test has seen the client give up
// (LostFirstReply::ClientGaveUp), so the client's read times out whatever the machine's speed.
// Later requests are answered at once.
class LostFirstReply {
 public:
  LostFirstReply() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) {
      int attempt = 0;
      {
        std::lock_guard lock(mu_);
        keys_.push_back(req.get_header_value("Idempotency-Key"));
        attempt = static_cast<int>(keys_.size());
      }
      if (attempt == 1) first_reply_.Hold();
      res.status = 201;
      res.set_content(json{{"id", 7}}.dump(), "application/json");
    };
    server_.Post("/v1/jobs", handler);
    server_.Post("/v1/queues/normal/close", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(sluice::testing::Eventually([&] { return server_.is_running(); }))
        << "the test server did not start";
  }
  ~LostFirstReply() {
    ClientGaveUp();
    server_.stop();
    thread_.join();
  }
  // The client's call has returned: the held first reply may go (to a closed connection).
  void ClientGaveUp() { first_reply_.Open(); }
  std::vector<std::string> keys() {
    std::lock_guard lock(mu_);
    return keys_;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  sluice::testing::ReplyGate first_reply_;
  std::mutex mu_;
  std::vector<std::string> keys_;
};

TEST(RestClientIdempotencyTest, ASubmissionWhoseReplyWasLostIsSentAgainWithTheSameKey) {
  LostFirstReply server;
  RestClient client(ClientOptions{.server = server.url(),
                                  .token = "t",
                                  .timeout = std::chrono::seconds(1),
                                  .follow_for = std::chrono::seconds(10)});
  Result<json> answer = client.Post("/v1/jobs", {{"command", "true"}});
  server.ClientGaveUp();
  ASSERT_TRUE(answer) << answer.error().ToString();
  EXPECT_EQ((*answer)["id"], 7);
  const std::vector<std::string> keys = server.keys();
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_FALSE(keys[0].empty());
  EXPECT_EQ(keys[0], keys[1]);
  // The next call has a key of its own.
  ASSERT_TRUE(client.Post("/v1/jobs", {{"command", "true"}}));
  EXPECT_NE(server.keys().back(), keys[0]);
}

TEST(RestClientIdempotencyTest, OtherPostsAreNotRepeatedAfterALostReply) {
  LostFirstReply server;
  RestClient client(ClientOptions{.server = server.url(),
                                  .token = "t",
                                  .timeout = std::chrono::seconds(1),
                                  .follow_for = std::chrono::seconds(10)});
  EXPECT_FALSE(client.Post("/v1/queues/normal/close", json::object()));
  server.ClientGaveUp();
  EXPECT_EQ(server.keys().size(), 1u);
  EXPECT_TRUE(server.keys()[0].empty());
}

}  // namespace
}  // namespace sluice::client
