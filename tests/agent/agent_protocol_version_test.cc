// The agent's side of the versioned wire formats (R-OPS-5, wire/protocol_version.h), against
// an in-process fake controller on a loopback port: every request states the agent's protocol
// version, and a controller that refuses it is said in the log and asked again only after a
// long pause (the agent does not spin on a refusal only another release can lift).
#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "agent/agent.h"
#include "testing/wait.h"
#include "wire/protocol_version.h"

namespace sluice::agent {
namespace {

using nlohmann::json;
using sluice::testing::Eventually;
using namespace std::chrono_literals;

// Answers registrations (or refuses them as a controller of protocol 2.0 would) and
// heartbeats, and keeps the `Sluice-Protocol` header of each request.
class VersionedController {
 public:
  explicit VersionedController(bool refuse) : refuse_(refuse) {
    server_.Post(
        "/v1/agents/register", [this](const httplib::Request& req, httplib::Response& res) {
          Record(req);
          if (refuse_) {
            res.status = 400;
            const Status refusal = wire::CheckServed(wire::kProtocolVersion, {2, 0});
            res.set_content(wire::ProtocolRefusalBody(refusal).dump(), "application/json");
            return;
          }
          res.set_content(json{{"epoch", 1}, {"lease_seconds", 10}, {"heartbeat_ms", 50}}.dump(),
                          "application/json");
        });
    server_.Post(R"(/v1/agents/([^/]+)/heartbeat)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   Record(req);
                   res.set_content(json{{"epoch", 1}}.dump(), "application/json");
                 });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~VersionedController() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> Headers() {
    std::lock_guard lock(mu_);
    return headers_;
  }
  size_t registers() { return registers_.load(); }

 private:
  void Record(const httplib::Request& req) {
    std::lock_guard lock(mu_);
    headers_.push_back(req.get_header_value(wire::kProtocolHeader));
    if (req.path == "/v1/agents/register") ++registers_;
  }

  const bool refuse_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> headers_;
  std::atomic<size_t> registers_ = 0;
};

// The default logger (the agent's) writes into a string while the test runs.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::string text() {
    spdlog::default_logger()->flush();
    return stream_.str();
  }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream stream_;
};

class AgentThread {
 public:
  explicit AgentThread(const std::string& url) {
    AgentOptions options{.server = url, .token = "agent-token", .tick = 5ms};
    options.host = {.name = "h1", .slots = 1};
    agent_ = std::make_unique<Agent>(std::move(options));
    thread_ = std::thread([this] { agent_->Run(stop_); });
  }
  ~AgentThread() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::unique_ptr<Agent> agent_;
  std::thread thread_;
};

TEST(AgentProtocolVersionTest, EveryRequestStatesTheAgentsProtocol) {
  VersionedController controller(/*refuse=*/false);
  AgentThread agent(controller.url());
  ASSERT_TRUE(Eventually([&] { return controller.Headers().size() >= 3; }));
  for (const std::string& header : controller.Headers()) {
    EXPECT_EQ(header, wire::ToString(wire::kProtocolVersion));
  }
}

TEST(AgentProtocolVersionTest, ARefusedProtocolIsLoggedAndNotAskedAgainAtOnce) {
  CapturedLog log;
  VersionedController controller(/*refuse=*/true);
  AgentThread agent(controller.url());
  ASSERT_TRUE(
      Eventually([&] { return log.text().find("registration refused") != std::string::npos; }));
  // Both versions, as the controller named them.
  EXPECT_NE(log.text().find("protocol 2.0"), std::string::npos) << log.text();
  EXPECT_NE(log.text().find("protocol " + wire::ToString(wire::kProtocolVersion)),
            std::string::npos)
      << log.text();
  // Any other refusal is asked again within a second (backoff 100 ms .. 1 s): 4 times in 1.5 s.
  EXPECT_FALSE(Eventually([&] { return controller.registers() >= 2; }, 1500ms));
  EXPECT_EQ(controller.registers(), 1u);
}

}  // namespace
}  // namespace sluice::agent
