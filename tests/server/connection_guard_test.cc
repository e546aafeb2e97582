// Connection patterns that used to lock everyone out (issue 19, "Connections"): slowloris
// sockets, idle keep-alive connections, a bogus Content-Length. Agents and /healthz must
// still be served; slow connections must be cut at their deadline. Latency bounds here are
// loose on purpose (a loaded CI machine); scripts/connection-flood measures the figure.
#include "server/connection_guard.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/guard_fixture.h"
#include "testing/wait.h"

namespace sluice::server {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Opens `n` sockets that send the start of a request and nothing more.
std::vector<int> OpenSlowSockets(int port, int n) {
  std::vector<int> fds;
  for (int i = 0; i < n; ++i) {
    const int fd = ConnectLoopback(port);
    if (fd < 0) break;
    const std::string start = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    (void)::send(fd, start.data(), start.size(), MSG_NOSIGNAL);
    fds.push_back(fd);
  }
  return fds;
}

void CloseAll(std::vector<int>& fds) {
  for (int fd : fds) ::close(fd);
  fds.clear();
}

// True when the peer closed `fd` (EOF or reset; an error reply before is fine) within
// `within`.
bool ClosedByPeer(int fd, milliseconds within) {
  const auto deadline = Clock::now() + within;
  char buf[4096];
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(1, left.count()))) <= 0) continue;
    if (::recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0) return true;
  }
  return false;
}

class ConnectionGuardTest : public GuardTest {
 protected:
  void SetUp() override {
    rlimit limit{};
    ::getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    GuardTest::SetUp();
  }
  void Tune(ServerOptions& options) override { options.connections = limits_; }

  // An agent registers and heartbeats on a fresh connection; returns the time both took.
  milliseconds AgentRoundTrip() {
    const auto start = Clock::now();
    RawReply reg = SendRaw(
        port_, RawPost("/v1/agents/register", R"({"name":"h1","slots":4})", "agent-secret"));
    EXPECT_EQ(reg.status, 200) << reg.body;
    RawReply beat =
        SendRaw(port_, RawPost("/v1/agents/h1/heartbeat", R"({"wait_ms":0})", "agent-secret"));
    EXPECT_EQ(beat.status, 200) << beat.body;
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  }

  // Waits until the server has accepted `n` connections that are still open.
  bool AcceptedOpen(int n) {
    return sluice::testing::Eventually([&] { return server_->connections().open >= n; });
  }

  milliseconds HealthzTime() {
    const auto start = Clock::now();
    EXPECT_TRUE(Healthy());
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  }

  ConnectionLimits limits_;
};

TEST_F(ConnectionGuardTest, AgentsAndHealthzAreServedPast300SlowSockets) {
  std::vector<int> slow = OpenSlowSockets(port_, 300);
  ASSERT_EQ(slow.size(), 300u);
  ASSERT_TRUE(AcceptedOpen(300)) << server_->connections().open << " accepted";
  EXPECT_LT(HealthzTime(), milliseconds(3000));
  EXPECT_LT(AgentRoundTrip(), milliseconds(3000));
  // A user on the same address is beyond its share: told so at once, not left waiting.
  const auto start = Clock::now();
  RawReply user = SendRaw(port_, RawGet("/v1/jobs", "alice-token"));
  EXPECT_EQ(user.status, 503) << user.body;
  EXPECT_NE(ErrorOf(user).find("busy"), std::string::npos) << user.body;
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_GE(server_->connections().overflow, 300 - limits_.max_per_address);
  CloseAll(slow);
}

class ShortDeadlinesTest : public ConnectionGuardTest {
 protected:
  void SetUp() override {
    limits_ = ConnectionLimits{.max_connections = 60,
                               .reserved = 10,
                               .max_per_address = 1000,
                               .idle_timeout = milliseconds(1000),
                               .request_timeout = milliseconds(600),
                               .overflow_timeout = milliseconds(300)};
    ConnectionGuardTest::SetUp();
  }
};

TEST_F(ShortDeadlinesTest, SlowAndIdleConnectionsAreCutAtTheirDeadline) {
  std::vector<int> slow = OpenSlowSockets(port_, 20);
  std::vector<int> idle;
  for (int i = 0; i < 20; ++i) idle.push_back(ConnectLoopback(port_));
  // Slowloris: a header byte every 100 ms keeps each read within the socket's read timeout;
  // only the request deadline (600 ms) ends it.
  const auto start = Clock::now();
  std::vector<bool> closed(slow.size(), false);
  while (Clock::now() - start < milliseconds(4000) &&
         std::count(closed.begin(), closed.end(), true) < static_cast<long>(slow.size())) {
    for (size_t i = 0; i < slow.size(); ++i) {
      if (closed[i]) continue;
      char buf[256];
      const ssize_t n = ::recv(slow[i], buf, sizeof(buf), MSG_DONTWAIT);
      closed[i] = n == 0 || (n < 0 && errno != EAGAIN) ||
                  ::send(slow[i], "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(std::count(closed.begin(), closed.end(), true), 20);
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  EXPECT_GE(server_->connections().timed_out, 20);
  for (int fd : idle) EXPECT_TRUE(ClosedByPeer(fd, milliseconds(3000)));
  CloseAll(slow);
  CloseAll(idle);
  EXPECT_TRUE(Healthy());
}

TEST_F(ShortDeadlinesTest, ABogusContentLengthHoldsAConnectionOnlyUntilTheDeadline) {
  const int fd = ConnectLoopback(port_);
  const std::string partial = RawPost("/v1/jobs", R"({"command":"true"})", "alice-token");
  // Announce 100 bytes more than are sent.
  std::string raw = partial.substr(0, partial.find("Content-Length: ")) +
                    "Content-Length: 118\r\n\r\n{\"command\":\"true\"}";
  (void)::send(fd, raw.data(), raw.size(), MSG_NOSIGNAL);
  const auto start = Clock::now();
  EXPECT_TRUE(ClosedByPeer(fd, milliseconds(5000)));
  EXPECT_LT(Clock::now() - start, milliseconds(4000));
  ::close(fd);
}

// The caps of ShortDeadlinesTest with deadlines far beyond the test: the held connections stay
// open until the test closes them, so what it checks cannot race a deadline (with a 300 ms
// overflow deadline a slow machine may cut the held sockets before the probe arrives).
class CapsTest : public ConnectionGuardTest {
 protected:
  void SetUp() override {
    limits_ = ConnectionLimits{.max_connections = 60,
                               .reserved = 10,
                               .max_per_address = 1000,
                               .idle_timeout = milliseconds(60'000),
                               .request_timeout = milliseconds(60'000),
                               .overflow_timeout = milliseconds(60'000)};
    ConnectionGuardTest::SetUp();
  }
};

TEST_F(CapsTest, BeyondTheCapConnectionsGetA503AtOnce) {
  std::vector<int> held = OpenSlowSockets(port_, 60);
  ASSERT_TRUE(AcceptedOpen(60)) << server_->connections().open << " accepted";
  RawReply r = SendRaw(port_, RawGet("/healthz"), milliseconds(2000));
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_GE(server_->connections().refused, 1);
  CloseAll(held);
  // Once the client has closed them the server serves again.
  EXPECT_TRUE(sluice::testing::Eventually([&] { return Healthy(); }));
}

TEST_F(CapsTest, BeyondTheUserShareOnlyAgentsAndHealthzAreServed) {
  std::vector<int> held = OpenSlowSockets(port_, 50);  // max - reserved
  ASSERT_TRUE(AcceptedOpen(50)) << server_->connections().open << " accepted";
  EXPECT_EQ(SendRaw(port_, RawGet("/v1/hosts", "alice-token")).status, 503);
  EXPECT_EQ(SendRaw(port_, RawGet("/healthz")).status, 200);
  EXPECT_EQ(
      SendRaw(port_, RawPost("/v1/agents/register", R"({"name":"h2"})", "agent-secret")).status,
      200);
  CloseAll(held);
}

}  // namespace
}  // namespace sluice::server
