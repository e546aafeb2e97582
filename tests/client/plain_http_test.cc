// The plain-HTTP carrier (client/http_transport.h, issue 21): requests as cpp-httplib's server
// reads them, answers by length, in chunks or until close, a kept connection reused and
// replaced when the server dropped it, and its failures classed for RestClient's retries.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <vector>
#include <thread>

#include "client/http_transport.h"
#include "testing/reply_gate.h"
#include "testing/wait.h"

namespace sluice::client {
namespace {

using namespace std::chrono_literals;

class Server {
 public:
  Server() {
    server_.Get("/plain", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      connections_seen_.insert(req.remote_port);
      res.set_content("{\"auth\":\"" + req.get_header_value("Authorization") + "\"}",
                      "application/json");
    });
    server_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 201;
      res.set_content(req.get_header_value("Content-Type") + " " + req.body, "text/plain");
    });
    server_.Patch("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("patched " + req.body, "text/plain");
    });
    server_.Get("/chunked", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [](size_t offset, httplib::DataSink& sink) {
        if (offset < 30) {
          sink.write("0123456789", 10);
        } else {
          sink.done();
        }
        return true;
      });
    });
    server_.Get("/moved", [](const httplib::Request&, httplib::Response& res) {
      res.status = 307;
      res.set_header("Location", "http://127.0.0.1:1/v1/jobs");
    });
    // Answered only once the test has seen the client give up (testing/reply_gate.h).
    server_.Get("/slow", [this](const httplib::Request&, httplib::Response& res) {
      slow_reply_.Hold();
      res.set_content("late", "text/plain");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(sluice::testing::Eventually([&] { return server_.is_running(); }))
        << "the test server did not start";
  }
  ~Server() { Stop(); }
  void Stop() {
    if (!thread_.joinable()) return;
    slow_reply_.Open();
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  size_t connections() {
    std::lock_guard lock(mu_);
    return connections_seen_.size();
  }
  void set_keep_alive_max(size_t n) { server_.set_keep_alive_max_count(n); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  sluice::testing::ReplyGate slow_reply_;
  std::mutex mu_;
  std::set<int> connections_seen_;
};

TEST(PlainHttpTest, SendsRequestsAndReadsAnswersByLengthAndInChunks) {
  Server server;
  std::unique_ptr<HttpTransport> http = NewTransport(server.url(), {});
  HttpReply got = http->Send("GET", "/plain", {{"Authorization", "Bearer t"}}, "");
  ASSERT_EQ(got.failure, HttpReply::Failure::kNone) << got.error;
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "{\"auth\":\"Bearer t\"}");
  HttpReply posted = http->Send("POST", "/echo", {}, "{\"a\":1}");
  EXPECT_EQ(posted.status, 201);
  EXPECT_EQ(posted.body, "application/json {\"a\":1}");
  EXPECT_EQ(http->Send("PATCH", "/echo", {}, "x").body, "patched x");
  HttpReply chunked = http->Send("GET", "/chunked", {}, "");
  EXPECT_EQ(chunked.status, 200);
  EXPECT_EQ(chunked.body, std::string("0123456789").append("0123456789").append("0123456789"));
  HttpReply moved = http->Send("GET", "/moved", {}, "");
  EXPECT_EQ(moved.status, 307);
  EXPECT_EQ(moved.location, "http://127.0.0.1:1/v1/jobs");
  EXPECT_EQ(http->Send("GET", "/missing", {}, "").status, 404);
}

// Issue 45: Stream hands a 2xx body to the sink piece by piece (chunked or by length), reads
// any other answer into the reply, and a sink that stops ends the read without a failure.
TEST(PlainHttpTest, StreamHandsASuccessfulBodyToTheSinkAsItArrives) {
  Server server;
  std::unique_ptr<HttpTransport> http = NewTransport(server.url(), {});
  std::vector<std::string> pieces;
  const BodySink keep = [&](std::string_view piece) {
    pieces.emplace_back(piece);
    return true;
  };
  HttpReply chunked = http->Stream("/chunked", {}, keep);
  ASSERT_EQ(chunked.failure, HttpReply::Failure::kNone) << chunked.error;
  EXPECT_EQ(chunked.status, 200);
  EXPECT_TRUE(chunked.streamed);
  EXPECT_TRUE(chunked.body.empty());
  std::string joined;
  for (const std::string& piece : pieces) joined += piece;
  EXPECT_EQ(joined, "012345678901234567890123456789");
  pieces.clear();
  EXPECT_EQ(http->Stream("/plain", {{"Authorization", "Bearer t"}}, keep).status, 200);
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces.front().substr(0, 9), "{\"auth\":\"");
  pieces.clear();
  HttpReply missing = http->Stream("/missing", {}, keep);
  EXPECT_EQ(missing.status, 404);
  EXPECT_FALSE(missing.streamed);
  EXPECT_TRUE(pieces.empty());
  int calls = 0;
  HttpReply stopped = http->Stream("/chunked", {}, [&](std::string_view) { return ++calls < 1; });
  EXPECT_EQ(stopped.failure, HttpReply::Failure::kNone);
  EXPECT_EQ(calls, 1);
  // The connection left with an unread body is not reused: the next request still works.
  EXPECT_EQ(http->Send("GET", "/plain", {}, "").status, 200);
}

TEST(PlainHttpTest, KeepsItsConnectionAndReplacesOneTheServerClosed) {
  Server server;
  server.set_keep_alive_max(2);  // the server closes every second request's connection
  std::unique_ptr<HttpTransport> http = NewTransport(server.url() + "/ignored/path", {});
  for (int i = 0; i < 6; ++i) {
    HttpReply got = http->Send("GET", "/plain", {}, "");
    ASSERT_EQ(got.failure, HttpReply::Failure::kNone) << i << ": " << got.error;
    EXPECT_EQ(got.status, 200);
  }
  EXPECT_EQ(server.connections(), 3u);
}

TEST(PlainHttpTest, FailuresSayWhetherTheRequestMayHaveBeenSent) {
  Server server;
  std::unique_ptr<HttpTransport> http =
      NewTransport(server.url(), TransportOptions{.timeout = std::chrono::seconds(1)});
  HttpReply late = http->Send("GET", "/slow", {}, "");
  EXPECT_EQ(late.failure, HttpReply::Failure::kMaybeSent);
  EXPECT_FALSE(late.error.empty());
  const std::string url = server.url();
  server.Stop();
  HttpReply refused = NewTransport(url, {})->Send("GET", "/plain", {}, "");
  EXPECT_EQ(refused.failure, HttpReply::Failure::kConnection);
  EXPECT_EQ(refused.error, "Could not establish connection");
}

TEST(PlainHttpTest, HttpsNeedsTheInstalledCarrier) {
  SetHttpsTransport(nullptr);
  HttpReply reply = NewTransport("https://127.0.0.1:1", {})->Send("GET", "/", {}, "");
  EXPECT_EQ(reply.failure, HttpReply::Failure::kUntrusted);
  EXPECT_NE(reply.error.find("without HTTPS"), std::string::npos);
  EnableHttps();
  HttpReply tls = NewTransport("https://127.0.0.1:1", {})->Send("GET", "/", {}, "");
  EXPECT_EQ(tls.failure, HttpReply::Failure::kConnection);  // nothing listens on port 1
}

}  // namespace
}  // namespace sluice::client
