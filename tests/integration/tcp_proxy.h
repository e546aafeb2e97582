// TcpProxy: a loopback TCP forwarder that a test can cut, to stand in for a network
// partition between two processes on one machine (partition tests, HA tests).
// Forwards 127.0.0.1:port() to 127.0.0.1:target. While `Cut(true)`, bytes in both
// directions are read and dropped (connections stay open, nothing arrives), as when a
// network drops packets silently; new connections are still accepted.
// Thread-safety: Cut from any thread; one acceptor thread and one pump thread per connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace sluice::integration {

class TcpProxy {
 public:
  explicit TcpProxy(int target) : target_(target) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(listener_, 64);
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~TcpProxy() {
    stop_ = true;
    shutdown(listener_, SHUT_RDWR);
    close(listener_);
    acceptor_.join();
    std::lock_guard lock(mu_);
    for (std::thread& pump : pumps_) pump.join();
  }
  int port() const { return port_; }
  void Cut(bool cut) { cut_ = cut; }

 private:
  void AcceptLoop() {
    while (!stop_) {
      pollfd pfd{.fd = listener_, .events = POLLIN};
      if (poll(&pfd, 1, 50) <= 0) continue;
      const int client = accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      const int upstream = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(target_));
      if (connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(client);
        close(upstream);
        continue;
      }
      std::lock_guard lock(mu_);
      pumps_.emplace_back([this, client, upstream] { Pump(client, upstream); });
    }
  }
  void Pump(int a, int b) {
    char buffer[65536];
    while (!stop_) {
      pollfd fds[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
      if (poll(fds, 2, 50) <= 0) continue;
      bool closed = false;
      for (int i = 0; i < 2; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
        if (n <= 0) {
          closed = true;
          break;
        }
        if (!cut_ && write(i == 0 ? b : a, buffer, n) != n) closed = true;
      }
      if (closed) break;
    }
    close(a);
    close(b);
  }

  int target_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> cut_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> pumps_;
};

}  // namespace sluice::integration
