#include "base/host_list.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

namespace sluice {
namespace {

// The trailing number of a name (at most 18 digits, so it fits an int64_t), if it has one.
std::optional<int64_t> TrailingNumber(std::string_view digits) {
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  int64_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

// A number and the width it was padded to with zeros (0: not padded).
using Numbered = std::pair<int64_t, size_t>;

std::string NumberText(const Numbered& n) {
  std::string digits = std::to_string(n.first);
  if (digits.size() < n.second) digits.insert(0, n.second - digits.size(), '0');
  return digits;
}

// "1-3,7" for {1, 2, 3, 7}; a run keeps one padding width (n08-n10 is not a run of n8..).
std::string Ranges(const std::vector<Numbered>& numbers) {
  std::string ranges;
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1].first == numbers[j].first + 1 &&
           numbers[j + 1].second == numbers[i].second) {
      ++j;
    }
    if (!ranges.empty()) ranges += ",";
    ranges += NumberText(numbers[i]);
    if (j > i) ranges += "-" + NumberText(numbers[j]);
    i = j + 1;
  }
  return ranges;
}

}  // namespace

std::string CompressHostList(const std::vector<std::string>& hosts) {
  std::map<std::string, std::vector<Numbered>> numbered;  // by the name before the number
  std::vector<std::string> groups;
  for (const std::string& host : hosts) {
    size_t digits = host.size();
    while (digits > 0 && host[digits - 1] >= '0' && host[digits - 1] <= '9') --digits;
    const std::optional<int64_t> number = TrailingNumber(std::string_view(host).substr(digits));
    if (!number) {
      groups.push_back(host);
      continue;
    }
    const size_t width = host[digits] == '0' ? host.size() - digits : 0;
    numbered[host.substr(0, digits)].emplace_back(*number, width);
  }
  for (auto& [prefix, numbers] : numbered) {
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    const std::string ranges = Ranges(numbers);
    groups.push_back(prefix + (numbers.size() == 1 ? ranges : "[" + ranges + "]"));
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  std::string out;
  for (const std::string& group : groups) out += (out.empty() ? "" : ",") + group;
  return out;
}

}  // namespace sluice
