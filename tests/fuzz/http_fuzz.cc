// libFuzzer target over the controller's network surface (issue 19): each input becomes one
// HTTP request (method, path, headers, body) sent over loopback to an in-process controller
// (server::Server on a temporary state directory), whose answer is read back. The server must
// not crash (ASan/UBSan watch its threads in this process), hang beyond the request deadline,
// or answer 500: every bad request is a 4xx naming what was wrong (a 500 aborts, so the
// fuzzer reports the input).
//
// Input: byte 0 picks the token (none, alice, the administrator, the agent, a wrong one) and,
// with bit 3, raw mode (the rest is sent as is); otherwise the rest is
// `METHOD\nPATH\nHeader: value\n...\n\nBODY` and the request is framed with a correct
// Content-Length. Seeds: tests/fuzz/seeds/http.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>

#include "server/server.h"

namespace {

constexpr const char* kConfig = R"(hosts:
  - {name: h1, slots: 4}
  - {name: h2, slots: 4}
queues:
  - {name: normal}
  - {name: private, submit_users: [bob]}
quotas:
  max_pending_per_user: 20000
auth:
  agent_token: agent-secret
  users:
    - {name: alice, token: alice-token}
    - {name: bob, token: bob-token}
    - {name: root, token: admin-token, admin: true}
)";

constexpr const char* kTokens[] = {"", "alice-token", "admin-token", "agent-secret", "nope"};

struct Fixture {
  std::filesystem::path dir;
  std::unique_ptr<sluice::server::Server> server;

  Fixture() {
    signal(SIGPIPE, SIG_IGN);
    char pattern[] = "/tmp/sluice-http-fuzz-XXXXXX";
    dir = mkdtemp(pattern);
    std::ofstream(dir / "cluster.yaml") << kConfig;
    sluice::server::ServerOptions options{.config_path = (dir / "cluster.yaml").string(),
                                          .state_dir = (dir / "state").string(),
                                          .listen = "127.0.0.1:0"};
    options.connections.request_timeout = std::chrono::milliseconds(1000);
    options.connections.idle_timeout = std::chrono::milliseconds(500);
    options.log =
        std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
    auto started = sluice::server::Server::Start(options);
    if (!started) {
      std::fprintf(stderr, "http_fuzz: %s\n", started.error().ToString().c_str());
      std::abort();
    }
    server = std::move(*started);
  }
  ~Fixture() {
    server.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

Fixture& TheServer() {
  static Fixture* fixture = [] {
    auto* f = new Fixture();
    std::atexit([] { delete &TheServer(); });
    return f;
  }();
  return *fixture;
}

// `METHOD\nPATH\nheaders...\n\nBODY` framed as HTTP/1.1 with the token and a Content-Length.
std::string Frame(std::string_view rest, const std::string& token) {
  auto line = [&rest]() {
    const size_t end = rest.find('\n');
    std::string_view out = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    return std::string(out);
  };
  std::string method = line();
  std::string path = line();
  if (method.empty()) method = "GET";
  if (path.empty() || path[0] != '/') path = "/" + path;
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n";
  if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
  while (!rest.empty()) {
    std::string header = line();
    if (header.empty()) break;
    request += header + "\r\n";
  }
  request += "Content-Length: " + std::to_string(rest.size()) + "\r\n\r\n";
  request += rest;
  return request;
}

// Sends `request`, reads the answer until the server closes or 2 s pass; returns the status
// (0: none).
int Exchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int status = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    shutdown(fd, SHUT_WR);
    std::string answer;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0 && answer.size() < (1 << 20)) {
      answer.append(buffer, static_cast<size_t>(n));
    }
    if (answer.rfind("HTTP/1.1 ", 0) == 0 && answer.size() >= 12) {
      status = std::atoi(answer.substr(9, 3).c_str());
    }
  }
  close(fd);
  return status;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  Fixture& fixture = TheServer();
  const std::string token = kTokens[(data[0] & 7) % 5];
  const bool raw = (data[0] & 8) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  // The event stream never ends by itself: it is left to the tests.
  if (rest.find("/v1/events") != std::string_view::npos) return 0;
  const std::string request = raw ? std::string(rest) : Frame(rest, token);
  const int status = Exchange(fixture.server->port(), request);
  if (status >= 500 && status != 503) {
    std::fprintf(stderr, "http_fuzz: status %d for:\n%s\n", status,
                 request.substr(0, 2000).c_str());
    std::abort();
  }
  return 0;
}
