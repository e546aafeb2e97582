// A host's health check on the agent protocol (R-OPS-4; docs/health-checks.md): what the
// controller tells an agent to run (core::HealthCheck), and the result the agent reports back.
//
//   controller -> agent, in register and heartbeat replies:
//     "health_check": {"program", "interval", "timeout"}   (seconds)   or null: none
//   agent -> controller, in register and heartbeat requests:
//     "health": {"ok": bool, "message": "..."}
//
// Decoded: a program that is an absolute path of at most kMaxHealthProgramBytes; interval and
// timeout 1..kMaxHealthSeconds; a message of at most kMaxHealthMessageBytes (longer ones are
// refused by the controller: the agent clips them, ClipHealthMessage).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "core/model/health_check.h"

namespace sluice::wire {

inline constexpr size_t kMaxHealthMessageBytes = 256;
inline constexpr size_t kMaxHealthProgramBytes = 4096;
inline constexpr int64_t kMaxHealthSeconds = 7 * 86400;

// The last result of a host's health program: passed, or failed with why (its first `ERROR`
// line, its last line of output, "exit N", "killed by signal N" or "timed out after N s").
struct HealthReport {
  bool ok = true;
  std::string message;  // "" when it passed

  friend bool operator==(const HealthReport&, const HealthReport&) = default;
};

// `text` cut to kMaxHealthMessageBytes at a character boundary, invalid UTF-8 replaced by '?'
// and control characters by spaces (it is shown in `sluice hosts` and logs).
std::string ClipHealthMessage(std::string_view text);

nlohmann::json EncodeHealthReport(const HealthReport& report);
// Errors: kInvalidArgument naming `health.<field>`.
Result<HealthReport> DecodeHealthReport(const nlohmann::json& value);

// nullopt encodes as null.
nlohmann::json EncodeHealthCheck(const std::optional<core::HealthCheck>& check);
// null decodes as nullopt. Errors: kInvalidArgument naming `health_check.<field>`.
Result<std::optional<core::HealthCheck>> DecodeHealthCheck(const nlohmann::json& value);

}  // namespace sluice::wire
