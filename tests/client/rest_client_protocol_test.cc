// The client library (the CLI's) states its protocol version on every request, and a
// controller's refusal of it reaches the caller with both versions named (R-OPS-5).
#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/rest_client.h"
#include "testing/wait.h"
#include "wire/protocol_version.h"

namespace sluice::client {
namespace {

// A controller of protocol 2.0: it refuses every request of major 1, as its request guard does.
class NewerController {
 public:
  NewerController() {
    server_.Get("/v1/jobs", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string header = req.get_header_value(wire::kProtocolHeader);
      {
        std::lock_guard lock(mu_);
        headers_.push_back(header);
      }
      Result<wire::ProtocolVersion> peer = wire::ParseProtocolVersion(header);
      const Status refusal = peer ? wire::CheckServed(*peer, {2, 0}) : peer.error();
      res.status = 400;
      res.set_content(wire::ProtocolRefusalBody(refusal).dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(sluice::testing::Eventually([&] { return server_.is_running(); }));
  }
  ~NewerController() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> headers() {
    std::lock_guard lock(mu_);
    return headers_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> headers_;
};

TEST(RestClientProtocolTest, StatesItsVersionAndReportsARefusalNamingBoth) {
  NewerController controller;
  RestClient client(ClientOptions{.server = controller.url(), .token = "alice-token"});
  Result<nlohmann::json> jobs = client.Get("/v1/jobs");
  ASSERT_FALSE(jobs);
  const std::string ours = wire::ToString(wire::kProtocolVersion);
  ASSERT_EQ(controller.headers().size(), 1u);  // a 400 is not tried again
  EXPECT_EQ(controller.headers()[0], ours);
  EXPECT_NE(jobs.error().message().find("protocol 2.0"), std::string::npos)
      << jobs.error().message();
  EXPECT_NE(jobs.error().message().find("protocol " + ours), std::string::npos)
      << jobs.error().message();
}

}  // namespace
}  // namespace sluice::client
