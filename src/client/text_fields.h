// Small text helpers the client's parsers and formatters share (submit flags, DRMAA's time
// values, history and the Slurm drop-ins' listings), kept once.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::client {

// `text` cut at every `sep`, empty fields kept ("a,,b" -> a, "", b; "" -> one empty field).
inline std::vector<std::string_view> SplitFields(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// `unix_seconds` in the local time zone as YYYY-MM-DDTHH:MM:SS (Slurm's and history's form).
inline std::string LocalIsoTime(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &tm);
  return buffer;
}

}  // namespace sluice::client
