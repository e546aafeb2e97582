// ReportBudget: what an agent may put in one heartbeat, so that no job can make its host's
// heartbeats too large for the controller (issue 19, "poison jobs": two jobs with 600 KB
// output paths made every launch-failure report exceed the 1 MiB body limit; the heartbeat
// was refused with 413 for ever and the host lost its lease).
//
// Rules: a launch failure's message is valid UTF-8 of at most kMaxReportMessageBytes (the
// rest cut, and said so); exits and failures go out oldest job id first, as many as fit in
// kMaxReportBytes of JSON, the rest in the following heartbeats (they stay unacknowledged
// until the controller has them).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "wire/agent_protocol.h"

namespace sluice::agent {

inline constexpr size_t kMaxReportMessageBytes = 4096;
inline constexpr size_t kMaxReportBytes = 256 << 10;  // a quarter of the controller's limit

// `text` as valid UTF-8 (an invalid byte becomes '?') of at most `max_bytes`; a cut text ends
// with " ...(N bytes cut)" when `max_bytes` leaves room for it (more than 32).
std::string BoundedText(std::string_view text, size_t max_bytes = kMaxReportMessageBytes);

// Adds to `request` the exits and launch failures that fit in `budget` bytes of JSON,
// lowest job ids first. Returns how many were left for a later heartbeat.
size_t FillReports(const std::map<int64_t, wire::ExitReport>& exits,
                   const std::map<int64_t, wire::LaunchFailure>& failures, size_t budget,
                   wire::HeartbeatRequest& request);

}  // namespace sluice::agent
