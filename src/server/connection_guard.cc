#include "server/connection_guard.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "server/text_parsers.h"

namespace sluice::server {

using Clock = std::chrono::steady_clock;

struct ConnectionGuard::Connection {
  ConnectionGuard* guard = nullptr;
  uint64_t id = 0;
  int fd = -1;  // a dup of the accepted socket (-1 when dup failed: not watched)
  std::string address;
  bool overflow = false;
  bool shut = false;
  std::atomic<int64_t> discard_bytes = -1;  // StopReading: the body to discard, then close
  Clock::time_point deadline = Clock::time_point::max();  // max: none
};

namespace {

// Guards by the port they watch (the accept() interposition looks them up).
Mutex registry_mu{LockRank::kConnectionRegistry};
std::map<int, ConnectionGuard*>& Registry() {
  static auto* registry = new std::map<int, ConnectionGuard*>();
  return *registry;
}

// The listener thread's last admitted connection, picked up by the task queue's enqueue().
thread_local std::shared_ptr<void> tl_accepted;
// The worker's current connection.
thread_local std::shared_ptr<void> tl_current;

int LocalPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return -1;
}

std::string PeerAddress(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char text[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text, sizeof(text));
  } else if (addr.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, text, sizeof(text));
  }
  return text;
}

// The answer to a connection refused at accept; best effort, never blocks.
void SendBusyAndClose(int fd, int open) {
  const std::string body =
      "{\"error\":\"server busy: " + std::to_string(open) + " connections open; retry later\"}";
  const std::string reply =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\nConnection: close\r\nRetry-After: 1\r\n\r\n" + body;
  (void)::send(fd, reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

// After a refusal's response: the body the client still sends is read and dropped (never
// kept; the watchdog bounds how long), so that closing does not reset the connection before
// the client has read the answer; then the connection ends.
void DiscardAndClose(int fd, int64_t bytes) {
  if (fd < 0) return;
  ::shutdown(fd, SHUT_WR);
  char buf[16384];
  while (bytes > 0) {
    const ssize_t n =
        ::recv(fd, buf, static_cast<size_t>(std::min<int64_t>(bytes, sizeof(buf))), 0);
    if (n <= 0) break;
    bytes -= n;
  }
  ::shutdown(fd, SHUT_RD);
}

// cpp-httplib listens with a backlog of 5: a burst of connections (agents reconnecting after
// a restart, a flood) overflows it and each dropped SYN costs its client a second. listen()
// again on the listening socket of `port` widens the queue.
void WidenBacklog(int port) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    const std::optional<int64_t> number = ParseInteger(entry.path().filename().string());
    if (!number || *number < 0 || *number > std::numeric_limits<int>::max()) continue;
    const int fd = static_cast<int>(*number);
    int listening = 0;
    socklen_t len = sizeof(listening);
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening &&
        LocalPort(fd) == port) {
      (void)::listen(fd, SOMAXCONN);
    }
  }
}

bool Privileged(const std::string& path) {
  return path == "/healthz" || path.rfind("/v1/agents/", 0) == 0;
}

}  // namespace

// A task queue with a thread per connection (up to a cap): httplib hands each accepted
// socket to enqueue() on the listener thread right after accept(), where the connection
// the interposed accept() admitted is still in tl_accepted.
class ConnectionGuard::WorkerQueue : public httplib::TaskQueue {
 public:
  WorkerQueue(ConnectionGuard& guard, size_t max_threads)
      : guard_(guard), max_threads_(max_threads) {}
  ~WorkerQueue() override = default;

  void enqueue(std::function<void()> fn) override {
    auto connection = std::static_pointer_cast<Connection>(std::exchange(tl_accepted, nullptr));
    std::lock_guard lock(mu_);
    jobs_.push_back([this, fn = std::move(fn), connection] {
      tl_current = connection;
      fn();
      tl_current = nullptr;
      if (connection) guard_.Release(connection);
    });
    if (idle_ == 0 && threads_.size() < max_threads_) {
      threads_.emplace_back([this] { Work(); });
    }
    cv_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Work() {
    std::unique_lock lock(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      --idle_;
      if (jobs_.empty()) return;  // stopping, nothing left
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }

  ConnectionGuard& guard_;
  const size_t max_threads_;
  Mutex mu_{LockRank::kWorkerQueue};
  std::condition_variable_any cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

ConnectionGuard::ConnectionGuard(ConnectionLimits limits, std::shared_ptr<spdlog::logger> log)
    : limits_(limits), log_(std::move(log)) {
  watchdog_ = std::thread([this] { WatchLoop(); });
}

ConnectionGuard::~ConnectionGuard() {
  {
    std::lock_guard registry(registry_mu);
    if (port_ > 0 && Registry()[port_] == this) Registry().erase(port_);
  }
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  watchdog_.join();
}

void ConnectionGuard::Attach(httplib::Server& server) {
  const size_t threads = static_cast<size_t>(limits_.max_connections) + 8;
  server.new_task_queue = [this, threads] { return new WorkerQueue(*this, threads); };
  server.set_keep_alive_max_count(100000);
  server.set_keep_alive_timeout(std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(limits_.idle_timeout).count()));
  server.set_read_timeout(limits_.request_timeout);
  server.set_write_timeout(std::chrono::seconds(10));
  server.set_logger([](const httplib::Request&, const httplib::Response&) {
    auto connection = std::static_pointer_cast<Connection>(tl_current);
    if (!connection) return;
    ConnectionGuard& guard = *connection->guard;
    if (const int64_t discard = connection->discard_bytes; discard >= 0) {
      guard.SetPhase(*connection, false, guard.limits_.request_timeout);
      DiscardAndClose(connection->fd, discard);
      return;
    }
    const auto budget =
        connection->overflow ? guard.limits_.overflow_timeout : guard.limits_.request_timeout;
    guard.SetPhase(*connection, false, guard.limits_.idle_timeout + budget);
  });
}

void ConnectionGuard::Watch(int port) {
  WidenBacklog(port);
  std::lock_guard registry(registry_mu);
  std::lock_guard lock(mu_);
  port_ = port;
  Registry()[port] = this;
}

ConnectionGuard::Counts ConnectionGuard::counts() const {
  std::lock_guard lock(mu_);
  Counts counts = counts_;
  counts.open = static_cast<int>(open_.size());
  return counts;
}

int ConnectionGuard::OnAccept(int listen_fd, int fd) {
  std::lock_guard registry(registry_mu);
  auto it = Registry().find(LocalPort(listen_fd));
  if (it == Registry().end()) return fd;
  std::shared_ptr<Connection> connection = it->second->Admit(fd);
  if (!connection) return -1;
  tl_accepted = connection;
  return fd;
}

std::shared_ptr<ConnectionGuard::Connection> ConnectionGuard::Admit(int fd) {
  auto connection = std::make_shared<Connection>();
  connection->guard = this;
  connection->address = PeerAddress(fd);
  std::unique_lock lock(mu_);
  const int open = static_cast<int>(open_.size());
  const int from_address = per_address_[connection->address];
  const bool warn = Clock::now() - last_warning_ > std::chrono::seconds(10);
  if (open >= limits_.max_connections) {
    ++counts_.refused;
    if (warn) {
      last_warning_ = Clock::now();
      log_->warn("connections: {} open (limit {}): refusing new ones with 503", open,
                 limits_.max_connections);
    }
    lock.unlock();
    SendBusyAndClose(fd, open);
    return nullptr;
  }
  connection->overflow =
      open >= limits_.max_connections - limits_.reserved || from_address >= limits_.max_per_address;
  if (connection->overflow) {
    ++counts_.overflow;
    if (warn) {
      last_warning_ = Clock::now();
      log_->warn(
          "connections: {} open, {} from {} (limits {}, {} per address): further ones "
          "are served for agents and /healthz only",
          open, from_address, connection->address, limits_.max_connections - limits_.reserved,
          limits_.max_per_address);
    }
  }
  connection->id = next_id_++;
  connection->fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  connection->deadline =
      Clock::now() + (connection->overflow ? limits_.overflow_timeout : limits_.request_timeout);
  open_[connection->id] = connection;
  ++per_address_[connection->address];
  return connection;
}

void ConnectionGuard::Release(const std::shared_ptr<Connection>& connection) {
  {
    std::lock_guard lock(mu_);
    open_.erase(connection->id);
    if (--per_address_[connection->address] <= 0) per_address_.erase(connection->address);
  }
  if (connection->fd >= 0) ::close(connection->fd);
}

void ConnectionGuard::SetPhase(Connection& connection, bool handling,
                               std::chrono::milliseconds budget) {
  std::lock_guard lock(mu_);
  connection.deadline = handling ? Clock::time_point::max() : Clock::now() + budget;
}

void ConnectionGuard::WatchLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    stop_cv_.wait_for(lock, std::chrono::milliseconds(100));
    const Clock::time_point now = Clock::now();
    for (auto& [id, connection] : open_) {
      if (connection->shut || connection->fd < 0 || connection->deadline > now) continue;
      ::shutdown(connection->fd, SHUT_RDWR);
      connection->shut = true;
      ++counts_.timed_out;
    }
  }
}

Status ConnectionGuard::OnHeaders(const std::string& path, bool has_body) {
  auto connection = std::static_pointer_cast<Connection>(tl_current);
  if (!connection) return Status::Ok();
  ConnectionGuard& guard = *connection->guard;
  if (connection->overflow && !Privileged(path)) {
    std::lock_guard lock(guard.mu_);
    ++guard.counts_.busy;
    return Status(StatusCode::kUnavailable,
                  "server busy: too many connections from " + connection->address +
                      " or in total; only agents and /healthz are served beyond the limits, "
                      "retry later");
  }
  const auto budget =
      connection->overflow ? guard.limits_.overflow_timeout : guard.limits_.request_timeout;
  guard.SetPhase(*connection, !has_body, budget);
  return Status::Ok();
}

void ConnectionGuard::MarkHandling() {
  auto connection = std::static_pointer_cast<Connection>(tl_current);
  if (connection) connection->guard->SetPhase(*connection, true, {});
}

void ConnectionGuard::StopReading(int64_t body_bytes) {
  auto connection = std::static_pointer_cast<Connection>(tl_current);
  // The response goes out first (httplib refuses to write to a socket at end of input).
  if (connection && connection->fd >= 0)
    connection->discard_bytes = std::max<int64_t>(0, body_bytes);
}

}  // namespace sluice::server

// The interposition (see the header's NOTE): the process's accept() is accept4() plus the
// guard of the listening port, if any. A refused connection was answered and closed; the
// next one is accepted in its place, as httplib's loop would retry.
extern "C" int accept(int fd, sockaddr* __restrict addr, socklen_t* __restrict len) {
  for (;;) {
    const int accepted = ::accept4(fd, addr, len, 0);
    if (accepted < 0) return accepted;
    const int kept = sluice::server::ConnectionGuard::OnAccept(fd, accepted);
    if (kept >= 0) return kept;
  }
}
