#include "wire/output_pattern.h"

#include "base/array_ids.h"

namespace sluice::wire {

std::string ExpandOutputPattern(std::string_view pattern, JobId id) {
  const std::string job = std::to_string(ArrayIdOf(id));
  const std::string index = IsArrayElement(id) ? std::to_string(ArrayIndexOf(id)) : "0";
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] != '%' || next == '\0') {
      out += pattern[i];
      continue;
    }
    if (next == 'j' || next == 'J' || next == 'A') {
      out += job;
    } else if (next == 'a' || next == 'I') {
      out += index;
    } else {
      out += pattern[i];
      out += next;
    }
    ++i;
  }
  return out;
}

}  // namespace sluice::wire
