// ServiceNotifier: tells the service manager (systemd, `Type=notify`) what the daemon is doing
// (R-OPS-2): READY=1 once it serves, STATUS= lines, RELOADING=1 around a reload, STOPPING=1
// on an orderly stop, and WATCHDOG=1 from the loop that must stay alive. Without
// NOTIFY_SOCKET every call does nothing, so the daemons call it unconditionally.
//
// Why our own sender and not libsystemd's sd_notify: the protocol is one datagram per
// message on an AF_UNIX socket (docs/systemd.md), and linking libsystemd would add a shared
// library to every start of sluice-full, whose loading cost is measured
// (docs/performance.md).
//
// The watchdog: systemd restarts the service when no WATCHDOG=1 arrives within WATCHDOG_USEC
// and asks for one at least every half of it. A loop calls KeepAlive on every turn and waits
// at most KeepAliveEvery() (a quarter) between turns; KeepAlive sends at most every eighth,
// so a loop that turns often sends no more and the longest gap stays near 3/8 of the
// interval plus one turn.
// Representation: the socket (close-on-exec: jobs and shepherds never inherit it), its
// address, the watchdog interval (none: not asked, or asked of another pid), the last
// keep-alive's time (an atomic) and the last status sent.
// Thread-safety: every method may be called from any thread. FromEnvironment REQUIRES that no
// other thread runs yet: it unsets the variables, so that children do not inherit them.
// Implements R-OPS-2 (the sending side).
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::daemon {

class ServiceNotifier {
 public:
  // Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID and unsets them. Never null: without
  // NOTIFY_SOCKET, or with one that cannot be used (logged once as a warning), it is disabled.
  static std::unique_ptr<ServiceNotifier> FromEnvironment();
  // A disabled notifier (tests, and daemons run by hand).
  ServiceNotifier() = default;
  ~ServiceNotifier();
  ServiceNotifier(const ServiceNotifier&) = delete;
  ServiceNotifier& operator=(const ServiceNotifier&) = delete;

  bool enabled() const { return fd_ >= 0; }
  // READY=1 with `status`: start-up (or a reload) is complete.
  void Ready(std::string_view status);
  // STATUS=`status`, unless it is the status sent last.
  void Status(std::string_view status);
  // RELOADING=1 (with MONOTONIC_USEC) and `status`; Ready ends the reload.
  void Reloading(std::string_view status);
  // STOPPING=1 and `status`: an orderly stop has begun.
  void Stopping(std::string_view status);

  // Whether the service manager asked this process for keep-alives.
  bool watchdog() const { return watchdog_.has_value(); }
  // The longest a loop that calls KeepAlive may wait between turns (a quarter of the
  // watchdog's interval); a day without a watchdog.
  std::chrono::milliseconds KeepAliveEvery() const;
  // WATCHDOG=1, unless one went less than an eighth of the interval ago.
  void KeepAlive();

 private:
  // Sends one datagram (errors are logged once: the service manager may have gone away).
  void Send(std::string_view datagram);

  int fd_ = -1;
  sockaddr_un address_{};
  socklen_t address_size_ = 0;
  std::optional<std::chrono::microseconds> watchdog_;
  std::atomic<int64_t> last_keep_alive_ns_{0};  // steady clock; 0: none sent yet
  std::atomic<bool> send_failed_{false};
  // NOTE: a std::mutex, not a ranked sluice::Mutex (base/mutex.h): a leaf held for a string
  // compare only, in a layer the agent shares, whose locks are std::mutex.
  std::mutex status_mu_;
  std::string last_status_;  // guarded by status_mu_
};

}  // namespace sluice::daemon
