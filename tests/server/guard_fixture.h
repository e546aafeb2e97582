// Test support for the hostile-input and connection tests (issue 19): an in-process server on
// loopback with users, agent tokens and two hosts, and a raw socket client that sends bytes
// exactly as given (httplib's client would encode or refuse them).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/loopback_options.h"
#include "server/server.h"
#include "testing/subprocess.h"

namespace sluice::server {

inline constexpr const char* kGuardConfig = R"(hosts:
  - {name: h1, slots: 4}
  - {name: h2, slots: 4}
queues:
  - {name: normal}
auth:
  agent_token: agent-secret
  users:
    - {name: alice, token: alice-token}
    - {name: root, token: admin-token, admin: true}
)";

// A connected TCP socket to 127.0.0.1:port (-1 on failure).
inline int ConnectLoopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything the peer sends until it closes, `quiet` passes without data, or `limit` bytes.
inline std::string ReadReply(int fd, std::chrono::milliseconds quiet, size_t limit = 1 << 20) {
  std::string out;
  char buf[4096];
  while (out.size() < limit) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(quiet.count())) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
    // One reply with Content-Length is enough.
    const size_t end = out.find("\r\n\r\n");
    const size_t cl = out.find("Content-Length: ");
    if (end != std::string::npos && cl != std::string::npos && cl < end) {
      const size_t length = std::stoul(out.substr(cl + 16));
      if (out.size() >= end + 4 + length) break;
    }
  }
  return out;
}

// Sends `raw` on a new connection; returns the reply's status (0 when none) and body.
struct RawReply {
  int status = 0;
  std::string body;
};
inline RawReply SendRaw(int port, const std::string& raw,
                        std::chrono::milliseconds quiet = std::chrono::milliseconds(5000)) {
  RawReply reply;
  const int fd = ConnectLoopback(port);
  if (fd < 0) return reply;
  size_t sent = 0;
  while (sent < raw.size()) {
    const ssize_t n = ::send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may answer and close before reading everything
    sent += static_cast<size_t>(n);
  }
  const std::string text = ReadReply(fd, quiet);
  ::close(fd);
  if (text.rfind("HTTP/1.1 ", 0) == 0) reply.status = std::atoi(text.c_str() + 9);
  const size_t end = text.find("\r\n\r\n");
  if (end != std::string::npos) reply.body = text.substr(end + 4);
  return reply;
}

// A request (method, path) with a JSON body, as raw bytes.
inline std::string RawRequest(const std::string& method, const std::string& path,
                              const std::string& body, const std::string& token,
                              const std::string& extra_headers = "") {
  std::string raw = method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  if (!token.empty()) raw += "Authorization: Bearer " + token + "\r\n";
  raw += "Content-Type: application/json\r\n" + extra_headers;
  raw += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return raw;
}

inline std::string RawPost(const std::string& path, const std::string& body,
                           const std::string& token, const std::string& extra_headers = "") {
  return RawRequest("POST", path, body, token, extra_headers);
}

inline std::string RawGet(const std::string& target, const std::string& token = "") {
  std::string raw = "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  if (!token.empty()) raw += "Authorization: Bearer " + token + "\r\n";
  return raw + "\r\n";
}

class GuardTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(kGuardConfig); }

  void StartServer(const std::string& config) {
    ServerOptions options = LoopbackOptions(dir_.path(), config);
    Tune(options);
    auto server = Server::Start(options);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    port_ = server_->port();
  }
  // Lets a test change options before the server starts.
  virtual void Tune(ServerOptions&) {}

  // True when /healthz answers 200 (a fresh connection).
  bool Healthy() {
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(2);
    client.set_read_timeout(2);
    auto r = client.Get("/healthz");
    return r && r->status == 200;
  }

  static std::string ErrorOf(const RawReply& r) {
    const nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
    return body.is_object() && body.contains("error") && body["error"].is_string()
               ? body["error"].get<std::string>()
               : "";
  }

  sluice::testing::TempDir dir_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

}  // namespace sluice::server
