// NotifySocket: a test's stand-in for systemd's notification socket (daemon/notify_message.h):
// an AF_UNIX datagram socket bound in a fresh temporary directory (or under an abstract name),
// whose datagrams a thread receives and keeps, each with the time it arrived, so that a test
// can wait for a message and measure the gaps between keep-alives.
// Every wait is bounded (testing/wait.h). Thread-safety: the methods may be called from any
// thread; the receiving thread is joined by the destructor.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testing/subprocess.h"

namespace sluice::testing {

class NotifySocket {
 public:
  using Clock = std::chrono::steady_clock;
  struct Message {
    Clock::time_point at;
    std::string text;
    std::map<std::string, std::string> fields;  // ParseNotifyMessage(text)
    bool Has(const std::string& name, const std::string& value) const {
      auto it = fields.find(name);
      return it != fields.end() && it->second == value;
    }
  };

  // `abstract`: bind `@sluice-test-PID-N` instead of a path.
  explicit NotifySocket(bool abstract = false);
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  bool ok() const { return fd_ >= 0; }
  // NOTIFY_SOCKET's value for the daemon under test.
  const std::string& address() const { return address_; }

  std::vector<Message> Messages() const;
  // The first message (from `from` on) that satisfies `match`, waiting at most `timeout`;
  // its index in Messages(), or nullopt.
  std::optional<size_t> WaitFor(const std::function<bool(const Message&)>& match,
                                std::chrono::milliseconds timeout, size_t from = 0) const;
  // Every message so far, one line each with its time since the first ("+0.210 s
  // WATCHDOG=1"), for failure messages.
  std::string Transcript() const;

 private:
  void Receive();

  TempDir dir_;
  std::string address_;
  int fd_ = -1;
  bool stop_ = false;  // guarded by mu_
  mutable std::mutex mu_;
  mutable std::condition_variable arrived_;
  std::vector<Message> messages_;  // guarded by mu_
  std::thread receiver_;
};

// The times of the messages that carry WATCHDOG=1, from index `from` on.
std::vector<NotifySocket::Clock::time_point> KeepAliveTimes(
    const std::vector<NotifySocket::Message>& messages, size_t from = 0);

}  // namespace sluice::testing
