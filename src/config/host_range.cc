// Host name ranges (`h[001-064]`): ExpandHostRange, whose contract is in cluster_yaml.h.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/cluster_yaml.h"
#include "config/yaml_reader.h"

namespace sluice::config {
namespace {

using yaml::Quote;

bool IsHostNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

bool AllHostNameChars(std::string_view text) {
  return std::all_of(text.begin(), text.end(), IsHostNameChar);
}

// A range bound: 1 to 9 decimal digits, so that hi - lo + 1 fits easily in an int64.
bool IsRangeBound(std::string_view text) {
  return !text.empty() && text.size() <= 9 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsZeroPadded(std::string_view bound) { return bound.size() > 1 && bound[0] == '0'; }

}  // namespace

Result<std::vector<std::string>> ExpandHostRange(std::string_view pattern) {
  const auto bad = [&](std::string_view why) {
    return InvalidArgument("bad host name " + Quote(pattern) + ": " + std::string(why));
  };
  constexpr std::string_view kCharset = "only letters, digits, '-', '.' and '_' are allowed";
  if (pattern.empty()) return InvalidArgument("empty host name");
  const size_t open = pattern.find('[');
  const size_t close = pattern.find(']');
  if (open == std::string_view::npos && close == std::string_view::npos) {
    if (!AllHostNameChars(pattern)) return bad(kCharset);
    return std::vector<std::string>{std::string(pattern)};
  }
  if (open == std::string_view::npos || close < open) return bad("']' without '['");
  if (close == std::string_view::npos) return bad("unclosed '['");
  const std::string_view prefix = pattern.substr(0, open);
  const std::string_view body = pattern.substr(open + 1, close - open - 1);
  const std::string_view suffix = pattern.substr(close + 1);
  if (suffix.find_first_of("[]") != std::string_view::npos) return bad("only one range allowed");
  if (!AllHostNameChars(prefix) || !AllHostNameChars(suffix)) return bad(kCharset);
  if (body.find(',') != std::string_view::npos) return bad("lists in a range are not supported");
  const size_t dash = body.find('-');
  if (dash == std::string_view::npos) return bad("expected a range [lo-hi]");
  const std::string_view lo_text = body.substr(0, dash);
  const std::string_view hi_text = body.substr(dash + 1);
  if (!IsRangeBound(lo_text) || !IsRangeBound(hi_text)) {
    return bad("range bounds must be unsigned integers of at most 9 digits");
  }
  int64_t lo = 0;
  int64_t hi = 0;
  std::from_chars(lo_text.data(), lo_text.data() + lo_text.size(), lo);
  std::from_chars(hi_text.data(), hi_text.data() + hi_text.size(), hi);
  if (lo > hi) return bad(std::string(lo_text) + " > " + std::string(hi_text));
  const bool padded = IsZeroPadded(lo_text) || IsZeroPadded(hi_text);
  if (padded && lo_text.size() != hi_text.size()) {
    return bad("zero-padded bounds must have the same width");
  }
  if (static_cast<uint64_t>(hi - lo + 1) > kMaxHostRangeNames) {
    return bad("more than " + std::to_string(kMaxHostRangeNames) + " names");
  }
  const size_t width = padded ? lo_text.size() : 0;
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(hi - lo + 1));
  for (int64_t i = lo; i <= hi; ++i) {
    const std::string number = std::to_string(i);
    std::string name(prefix);
    if (number.size() < width) name.append(width - number.size(), '0');
    name += number;
    name += suffix;
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace sluice::config
