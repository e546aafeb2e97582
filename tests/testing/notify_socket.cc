#include "testing/notify_socket.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>

#include "daemon/notify_message.h"

namespace sluice::testing {

NotifySocket::NotifySocket(bool abstract) {
  static std::atomic<int> sockets{0};
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  socklen_t size = 0;
  if (abstract) {
    address_ = "@sluice-test-" + std::to_string(getpid()) + "-" + std::to_string(++sockets);
    std::memcpy(addr.sun_path + 1, address_.data() + 1, address_.size() - 1);
    size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size());
  } else {
    if (!dir_.ok()) return;
    address_ = (dir_.path() / "notify.sock").string();
    if (address_.size() >= sizeof addr.sun_path) return;
    std::memcpy(addr.sun_path, address_.c_str(), address_.size() + 1);
    size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address_.size() + 1);
  }
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), size) != 0) {
    close(fd);
    return;
  }
  fd_ = fd;
  receiver_ = std::thread([this] { Receive(); });
}

NotifySocket::~NotifySocket() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  if (receiver_.joinable()) receiver_.join();
  if (fd_ >= 0) close(fd_);
}

void NotifySocket::Receive() {
  char buffer[4096];
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
    }
    pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, 50) <= 0) continue;
    const ssize_t n = recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0) continue;
    Message message{.at = Clock::now(), .text = std::string(buffer, static_cast<size_t>(n))};
    message.fields = daemon::ParseNotifyMessage(message.text);
    std::lock_guard lock(mu_);
    messages_.push_back(std::move(message));
    arrived_.notify_all();
  }
}

std::vector<NotifySocket::Message> NotifySocket::Messages() const {
  std::lock_guard lock(mu_);
  return messages_;
}

std::optional<size_t> NotifySocket::WaitFor(const std::function<bool(const Message&)>& match,
                                            std::chrono::milliseconds timeout, size_t from) const {
  const Clock::time_point deadline = Clock::now() + timeout;
  std::unique_lock lock(mu_);
  size_t next = from;
  while (true) {
    for (; next < messages_.size(); ++next) {
      if (match(messages_[next])) return next;
    }
    if (arrived_.wait_until(lock, deadline) == std::cv_status::timeout &&
        next == messages_.size()) {
      return std::nullopt;
    }
  }
}

std::string NotifySocket::Transcript() const {
  std::lock_guard lock(mu_);
  std::string text;
  for (const Message& m : messages_) {
    std::string one_line = m.text;
    for (char& c : one_line) c = c == '\n' ? '|' : c;
    text +=
        fmt::format("+{:.3f} s {}\n",
                    std::chrono::duration<double>(m.at - messages_.front().at).count(), one_line);
  }
  return text;
}

std::vector<NotifySocket::Clock::time_point> KeepAliveTimes(
    const std::vector<NotifySocket::Message>& messages, size_t from) {
  std::vector<NotifySocket::Clock::time_point> times;
  for (size_t i = from; i < messages.size(); ++i) {
    if (messages[i].Has("WATCHDOG", "1")) times.push_back(messages[i].at);
  }
  return times;
}

}  // namespace sluice::testing
