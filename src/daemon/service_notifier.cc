#include "daemon/service_notifier.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "daemon/notify_message.h"

namespace sluice::daemon {
namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t MonotonicUsec() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000 + now.tv_nsec / 1000;
}

}  // namespace

std::unique_ptr<ServiceNotifier> ServiceNotifier::FromEnvironment() {
  auto notifier = std::make_unique<ServiceNotifier>();
  const char* socket_value = std::getenv("NOTIFY_SOCKET");
  if (socket_value == nullptr) return notifier;
  const Result<std::string> path = NotifySocketPath(socket_value);
  const Result<std::optional<std::chrono::microseconds>> watchdog =
      WatchdogInterval(std::getenv("WATCHDOG_USEC"), std::getenv("WATCHDOG_PID"), getpid());
  // Children (job shepherds, jobs, nvidia-smi) must not notify in our name.
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");
  unsetenv("WATCHDOG_PID");
  if (!path) {
    spdlog::warn("{}; not notifying the service manager", path.error().message());
    return notifier;
  }
  if (!watchdog) spdlog::warn("{}; no watchdog keep-alives", watchdog.error().message());
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    spdlog::warn("NOTIFY_SOCKET: socket: {}; not notifying the service manager",
                 std::strerror(errno));
    return notifier;
  }
  notifier->fd_ = fd;
  notifier->address_.sun_family = AF_UNIX;
  std::memcpy(notifier->address_.sun_path, path->data(), path->size());
  // An abstract name is exactly its bytes; a path also ends with its NUL.
  notifier->address_size_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path->size() +
                                                   (path->front() == '\0' ? 0 : 1));
  if (watchdog) notifier->watchdog_ = *watchdog;
  return notifier;
}

ServiceNotifier::~ServiceNotifier() {
  if (fd_ >= 0) close(fd_);
}

void ServiceNotifier::Send(std::string_view datagram) {
  if (fd_ < 0) return;
  const ssize_t sent = sendto(fd_, datagram.data(), datagram.size(), MSG_NOSIGNAL | MSG_DONTWAIT,
                              reinterpret_cast<const sockaddr*>(&address_), address_size_);
  if (sent < 0 && !send_failed_.exchange(true)) {
    spdlog::warn("notifying the service manager failed: {} (said once)", std::strerror(errno));
  }
}

void ServiceNotifier::Ready(std::string_view status) {
  if (fd_ < 0) return;
  {
    std::lock_guard lock(status_mu_);
    last_status_ = status;
  }
  Send(JoinAssignments({kReady, StatusAssignment(status)}));
}

void ServiceNotifier::Status(std::string_view status) {
  if (fd_ < 0) return;
  {
    std::lock_guard lock(status_mu_);
    if (last_status_ == status) return;
    last_status_ = status;
  }
  Send(StatusAssignment(status));
}

void ServiceNotifier::Reloading(std::string_view status) {
  if (fd_ < 0) return;
  {
    std::lock_guard lock(status_mu_);
    last_status_ = status;
  }
  Send(JoinAssignments({ReloadingMessage(MonotonicUsec()), StatusAssignment(status)}));
}

void ServiceNotifier::Stopping(std::string_view status) {
  if (fd_ < 0) return;
  {
    std::lock_guard lock(status_mu_);
    last_status_ = status;
  }
  Send(JoinAssignments({kStopping, StatusAssignment(status)}));
}

std::chrono::milliseconds ServiceNotifier::KeepAliveEvery() const {
  if (!watchdog_) return std::chrono::hours(24);
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::duration_cast<std::chrono::milliseconds>(*watchdog_ / 4));
}

void ServiceNotifier::KeepAlive() {
  if (fd_ < 0 || !watchdog_) return;
  const int64_t now = SteadyNowNs();
  const int64_t spacing = std::chrono::nanoseconds(*watchdog_ / 8).count();
  int64_t last = last_keep_alive_ns_.load(std::memory_order_relaxed);
  // One sender per spacing, even when two loops call at once (a standby's campaign hands
  // over to the scheduling thread).
  if (last != 0 && now - last < spacing) return;
  if (!last_keep_alive_ns_.compare_exchange_strong(last, now)) return;
  Send(kWatchdog);
}

}  // namespace sluice::daemon
