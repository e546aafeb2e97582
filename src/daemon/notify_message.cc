#include "daemon/notify_message.h"

#include <sys/un.h>

#include <charconv>

namespace sluice::daemon {
namespace {

// A positive decimal number, nothing around it.
std::optional<uint64_t> ParsePositive(std::string_view text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end || value == 0) return std::nullopt;
  return value;
}

}  // namespace

std::string StatusAssignment(std::string_view text) {
  std::string line = "STATUS=";
  line.reserve(line.size() + text.size());
  for (const char c : text) line += (c == '\n' || c == '\r') ? ' ' : c;
  return line;
}

std::string ReloadingMessage(int64_t monotonic_usec) {
  return "RELOADING=1\nMONOTONIC_USEC=" + std::to_string(monotonic_usec);
}

std::string JoinAssignments(std::initializer_list<std::string_view> assignments) {
  std::string datagram;
  for (const std::string_view assignment : assignments) {
    if (!datagram.empty()) datagram += '\n';
    datagram += assignment;
  }
  return datagram;
}

std::map<std::string, std::string> ParseNotifyMessage(std::string_view datagram) {
  std::map<std::string, std::string> fields;
  while (!datagram.empty()) {
    const size_t end = datagram.find('\n');
    const std::string_view line = datagram.substr(0, end);
    datagram = end == std::string_view::npos ? std::string_view() : datagram.substr(end + 1);
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;
    fields[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
  }
  return fields;
}

Result<std::string> NotifySocketPath(std::string_view value) {
  constexpr size_t kCapacity = sizeof(sockaddr_un{}.sun_path);
  if (value.empty()) return InvalidArgument("NOTIFY_SOCKET: empty");
  if (value.front() != '/' && value.front() != '@') {
    return InvalidArgument("NOTIFY_SOCKET=" + std::string(value) +
                           ": expected an absolute path or @NAME (abstract namespace)");
  }
  // A path needs its terminating NUL; an abstract name's bytes are counted by the address length.
  const size_t limit = value.front() == '/' ? kCapacity - 1 : kCapacity;
  if (value.size() > limit) {
    return InvalidArgument("NOTIFY_SOCKET=" + std::string(value) + ": longer than " +
                           std::to_string(limit) + " bytes");
  }
  std::string path(value);
  if (path.front() == '@') path.front() = '\0';
  return path;
}

Result<std::optional<std::chrono::microseconds>> WatchdogInterval(const char* usec, const char* pid,
                                                                  pid_t self) {
  if (usec == nullptr) return std::optional<std::chrono::microseconds>();
  const std::optional<uint64_t> interval = ParsePositive(usec);
  if (!interval) {
    return InvalidArgument(std::string("WATCHDOG_USEC=") + usec +
                           ": expected a positive number of microseconds");
  }
  if (pid != nullptr) {
    const std::optional<uint64_t> owner = ParsePositive(pid);
    if (!owner) return InvalidArgument(std::string("WATCHDOG_PID=") + pid + ": expected a pid");
    if (*owner != static_cast<uint64_t>(self)) return std::optional<std::chrono::microseconds>();
  }
  return std::optional(std::chrono::microseconds(*interval));
}

}  // namespace sluice::daemon
