#include "wire/host_slots.h"

#include <algorithm>
#include <charconv>

namespace sluice::wire {

std::vector<std::pair<std::string, int>> ParseHostSlots(std::string_view text) {
  std::vector<std::pair<std::string, int>> hosts;
  while (!text.empty()) {
    const std::string_view entry = text.substr(0, text.find(','));
    text.remove_prefix(std::min(text.size(), entry.size() + 1));
    if (entry.empty()) continue;
    const size_t colon = entry.rfind(':');
    int slots = 1;
    if (colon != std::string_view::npos) {
      std::from_chars(entry.data() + colon + 1, entry.data() + entry.size(), slots);
    }
    hosts.emplace_back(std::string(entry.substr(0, colon)), std::max(slots, 1));
  }
  return hosts;
}

}  // namespace sluice::wire
