#include "client/compat/slurm_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <optional>

#include "client/submit_request.h"
#include "client/text_fields.h"

namespace sluice::client::compat {
namespace {

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string Pad2(int64_t value) {
  return value < 10 ? "0" + std::to_string(value) : std::to_string(value);
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

Result<int64_t> ParseSlurmTime(std::string_view text) {
  const auto bad = [&] { return InvalidArgument("expected M, M:S, H:M:S, D-H, D-H:M or D-H:M:S"); };
  if (text == "infinite" || text == "unlimited" || text.empty() || text.size() > 32) return bad();
  int64_t days = 0;
  std::string_view clock = text;
  const size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    const auto d = ParseInt(text.substr(0, dash));
    if (!d || *d < 0) return bad();
    days = *d;
    clock = text.substr(dash + 1);
  }
  std::vector<int64_t> parts;
  while (true) {
    const size_t colon = clock.find(':');
    const auto value = ParseInt(clock.substr(0, colon));
    if (!value || *value < 0 || *value > 1'000'000'000) return bad();
    parts.push_back(*value);
    if (colon == std::string_view::npos) break;
    clock.remove_prefix(colon + 1);
  }
  if (parts.size() > 3) return bad();
  int64_t seconds = 0;
  if (dash != std::string_view::npos) {  // D-H, D-H:M, D-H:M:S
    const int64_t scale[3] = {3600, 60, 1};
    for (size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * scale[i];
  } else if (parts.size() == 1) {  // M
    seconds = parts[0] * 60;
  } else if (parts.size() == 2) {  // M:S
    seconds = parts[0] * 60 + parts[1];
  } else {  // H:M:S
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  }
  seconds += days * 86400;
  if (seconds <= 0) return InvalidArgument("the time limit must be positive");
  return seconds;
}

Result<std::string> TranslateSlurmDependency(std::string_view text) {
  const auto bad = [&](const std::string& why) { return InvalidArgument(why); };
  const bool any = text.find('?') != std::string_view::npos;
  if (any && text.find(',') != std::string_view::npos) {
    return bad("',' (all of) and '?' (any of) cannot be mixed");
  }
  const char sep = any ? '?' : ',';
  std::string out;
  while (!text.empty()) {
    const size_t end = text.find(sep);
    std::string_view term = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t colon = term.find(':');
    const std::string_view type = term.substr(0, colon);
    std::string_view atom;
    if (type == "after") atom = "started";
    if (type == "afterany") atom = "ended";
    if (type == "afterok") atom = "done";
    if (type == "afternotok") atom = "exit";
    if (atom.empty() || colon == std::string_view::npos) {
      return bad("expected after, afterany, afterok or afternotok followed by :JOBID[:JOBID...]");
    }
    std::string_view ids = term.substr(colon + 1);
    while (true) {
      const size_t next = ids.find(':');
      std::string_view id = ids.substr(0, next);
      const size_t underscore = id.find('_');  // an array element: 12_3 -> 12[3]
      const auto job = ParseInt(id.substr(0, underscore));
      const auto index = underscore == std::string_view::npos ? std::optional<int64_t>(0)
                                                              : ParseInt(id.substr(underscore + 1));
      if (!job || *job < 1 || !index || *index < 0) return bad("expected job ids after the type");
      if (!out.empty()) out += any ? " || " : " && ";
      out += std::string(atom) + "(" + std::string(id.substr(0, underscore));
      if (underscore != std::string_view::npos) out += "[" + std::to_string(*index) + "]";
      out += ")";
      if (next == std::string_view::npos) break;
      ids.remove_prefix(next + 1);
    }
  }
  if (out.empty()) return bad("expected a dependency, e.g. afterok:12");
  return out;
}

Result<std::string> TranslateSlurmBegin(std::string_view value, int64_t now) {
  std::string text(value);
  if (value.starts_with("now+")) {
    std::string_view rest = value.substr(4);
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    const auto amount = ParseInt(rest.substr(0, digits));
    const std::string_view unit = rest.substr(digits);
    int64_t scale = 0;
    if (unit.empty() || unit == "seconds" || unit == "s") scale = 1;
    if (unit == "minutes" || unit == "m") scale = 60;
    if (unit == "hours" || unit == "h") scale = 3600;
    if (unit == "days" || unit == "d") scale = 86400;
    if (unit == "weeks") scale = 7 * 86400;
    if (!amount || scale == 0) return InvalidArgument("expected now+N[seconds|minutes|hours|days]");
    text = "+" + std::to_string(*amount * scale);
  }
  Result<int64_t> begin = ParseBeginTime(text, now);
  if (!begin) return InvalidArgument("expected now+N, HH:MM or YYYY-MM-DD[THH:MM[:SS]]");
  return text;
}

Result<int64_t> ParseSlurmTimeLimit(std::string_view text) {
  if (EqualsIgnoringCase(text, "unlimited") || EqualsIgnoringCase(text, "infinite")) return 0;
  return ParseSlurmTime(text);
}

std::string SlurmDateTime(int64_t unix_seconds) {
  return unix_seconds <= 0 ? "Unknown" : LocalIsoTime(unix_seconds);
}

std::string SlurmElapsed(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  const int64_t days = seconds / 86400;
  const int64_t hours = seconds / 3600 % 24;
  const int64_t minutes = seconds / 60 % 60;
  const std::string tail = Pad2(minutes) + ":" + Pad2(seconds % 60);
  if (days > 0) return std::to_string(days) + "-" + Pad2(hours) + ":" + tail;
  if (hours > 0) return std::to_string(hours) + ":" + tail;
  return std::to_string(minutes) + ":" + Pad2(seconds % 60);
}

std::string SlurmClock(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  const int64_t days = seconds / 86400;
  const std::string clock =
      Pad2(seconds / 3600 % 24) + ":" + Pad2(seconds / 60 % 60) + ":" + Pad2(seconds % 60);
  return days > 0 ? std::to_string(days) + "-" + clock : clock;
}

}  // namespace sluice::client::compat
