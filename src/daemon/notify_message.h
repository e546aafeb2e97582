// The text of the service manager's notification protocol (sd_notify(3), R-OPS-2), apart
// from the socket: what NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID mean, and the datagrams
// a daemon sends. Pure functions, so that tests read what a daemon would
// send and a test's socket reads it back with the same rules.
//
// A datagram is newline-separated `NAME=VALUE` assignments (`READY=1\nSTATUS=serving`); the
// service manager applies them in order. A value must not hold a newline: StatusAssignment
// replaces one, so a multi-line text cannot forge another assignment.
// Thread-safety: plain functions of their arguments.
// Implements the message half of R-OPS-2.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::daemon {

inline constexpr std::string_view kReady = "READY=1";
inline constexpr std::string_view kStopping = "STOPPING=1";
inline constexpr std::string_view kWatchdog = "WATCHDOG=1";

// `STATUS=text`, with each newline (and carriage return) of `text` made a space.
std::string StatusAssignment(std::string_view text);

// `RELOADING=1` with the CLOCK_MONOTONIC time of the request in microseconds
// (`MONOTONIC_USEC=`), which systemd 253+ uses to tell this reload from a later one.
std::string ReloadingMessage(int64_t monotonic_usec);

// Joins assignments into one datagram (`a\nb`).
std::string JoinAssignments(std::initializer_list<std::string_view> assignments);

// A datagram's assignments by name (a later one of the same name wins; a line without `=` is
// skipped, as the service manager skips it).
std::map<std::string, std::string> ParseNotifyMessage(std::string_view datagram);

// NOTIFY_SOCKET as the bytes of a `sockaddr_un.sun_path`: `/path` (a file system socket) as
// is, `@name` (Linux's abstract namespace) with the `@` made a NUL byte. Errors
// (kInvalidArgument): empty, another form (systemd 253's `vsock:` is not supported), or
// longer than sun_path holds.
Result<std::string> NotifySocketPath(std::string_view value);

// The watchdog interval systemd asks of this process: WATCHDOG_USEC when WATCHDOG_PID is unset
// or names `self` (a watchdog meant for another process, e.g. the parent that exec'd us
// without clearing it, is not ours); nullopt when unset or not ours. Errors
// (kInvalidArgument): either variable is not a positive decimal number.
Result<std::optional<std::chrono::microseconds>> WatchdogInterval(const char* usec, const char* pid,
                                                                  pid_t self);

}  // namespace sluice::daemon
