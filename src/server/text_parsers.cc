#include "server/text_parsers.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

namespace sluice::server {

std::optional<int64_t> ParseInteger(std::string_view text) {
  int64_t out = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return out;
}

Result<int64_t> QueryInteger(const std::string& key, const std::string& value, int64_t min,
                             int64_t max) {
  const std::optional<int64_t> out = ParseInteger(value);
  if (!out || *out < min || *out > max) {
    return InvalidArgument(key + ": expected an integer in [" + std::to_string(min) + ", " +
                           std::to_string(max) + "], got '" + value.substr(0, 40) + "'");
  }
  return *out;
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

Result<std::vector<std::string>> ParseJobStates(std::string_view list) {
  static const std::map<std::string, std::string, std::less<>> kNames = {
      {"PENDING", "PENDING"},     {"PEND", "PENDING"},     {"PD", "PENDING"},
      {"HELD", "HELD"},           {"PSUSP", "HELD"},       {"H", "HELD"},
      {"ADMITTING", "ADMITTING"}, {"CF", "ADMITTING"},     {"CONFIGURING", "ADMITTING"},
      {"RUNNING", "RUNNING"},     {"RUN", "RUNNING"},      {"R", "RUNNING"},
      {"DONE", "DONE"},           {"CD", "DONE"},          {"COMPLETED", "DONE"},
      {"EXIT", "EXIT"},           {"F", "EXIT"},           {"FAILED", "EXIT"},
      {"CANCELLED", "CANCELLED"}, {"CA", "CANCELLED"},     {"CANCELED", "CANCELLED"}};
  std::vector<std::string> states;
  for (std::string name : SplitList(list)) {
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto it = kNames.find(name);
    if (it == kNames.end()) {
      return InvalidArgument("state: no job state '" + name.substr(0, 40) +
                             "'; expected PENDING, HELD, ADMITTING, RUNNING, DONE, EXIT, "
                             "CANCELLED (or LSF's PEND, PSUSP, RUN; Slurm's PD, R, CD, F, CA)");
    }
    if (std::find(states.begin(), states.end(), it->second) == states.end()) {
      states.push_back(it->second);
    }
  }
  return states;
}

}  // namespace sluice::server
