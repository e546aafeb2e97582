// `sluice peek` on the agent protocol (R-UX-5; bpeek): the controller asks the agent that runs
// a job for the tail of the job's output file, in its heartbeat reply (`peek` orders); the
// agent answers in its next heartbeat (`peeks` results), which it sends at once. The agent
// reads only the output file of a job it runs, and only the controller can ask (agent routes
// take the agent token): users go through GET /v1/jobs/ID/peek.
//   order:  {"id": 7, "job": 12, "lines": 10}              the last `lines` lines, or
//           {"id": 8, "job": 12, "offset": 2048}            the bytes from `offset` on (-f)
//   result: {"id": 7, "job": 12, "text": "...", "offset": 1800, "size": 2100}
//           {"id": 7, "job": 12, "error": "job 12 does not run here"}
// `text` starts at byte `offset` of the file and is at most kMaxPeekBytes (then it is the
// newest part); `size` is the file's size when read. Text is valid UTF-8 (other bytes are
// replaced by U+FFFD) so that it travels as JSON.
// Decoding never throws; errors are kInvalidArgument naming the field. Pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::wire {

inline constexpr int64_t kMaxPeekBytes = 64 * 1024;
inline constexpr int64_t kMaxPeekLines = 10'000;

struct PeekOrder {
  int64_t id = 0;
  int64_t job = 0;
  int64_t lines = 10;             // used when `offset` is absent; decoded clamped to [1, max]
  std::optional<int64_t> offset;  // >= 0
};

struct PeekResult {
  int64_t id = 0;
  int64_t job = 0;
  std::string text;
  int64_t offset = 0;
  int64_t size = 0;
  std::string error;  // non-empty: nothing was read
};

nlohmann::json EncodePeekOrder(const PeekOrder& order);
Result<PeekOrder> DecodePeekOrder(const nlohmann::json& entry, const std::string& where);
nlohmann::json EncodePeekResult(const PeekResult& result);
Result<PeekResult> DecodePeekResult(const nlohmann::json& entry, const std::string& where);

// Each of the array `key` of `body` (absent or null: none).
Result<std::vector<PeekOrder>> DecodePeekOrders(const nlohmann::json& body, const char* key);
Result<std::vector<PeekResult>> DecodePeekResults(const nlohmann::json& body, const char* key);

// `bytes` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string ValidUtf8(std::string_view bytes);

}  // namespace sluice::wire
