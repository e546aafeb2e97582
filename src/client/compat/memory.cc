#include "client/compat/memory.h"

#include <charconv>
#include <cmath>

#include "base/memory_units.h"

namespace sluice::client::compat {

Result<int64_t> ParseMemoryMb(std::string_view text, MemoryDialect dialect) {
  const bool lsf = dialect == MemoryDialect::kLsf;
  const auto bad = [&] {
    return InvalidArgument(lsf ? "expected a size like 105, 105MB or 4GB (units KB, MB, GB, TB)"
                               : "expected a size like 100, 100M or 4G (units K, M, G, T)");
  };
  size_t digits = 0;
  while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') ||
                                  (lsf && text[digits] == '.'))) {
    ++digits;
  }
  if (digits == 0 || digits > 18) return bad();
  double value = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + digits, value);
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + digits) return bad();
  std::string_view unit = text.substr(digits);
  double scale = 1;
  if (!unit.empty()) {
    const bool with_b = unit.size() == 2 && (unit[1] == 'B' || unit[1] == 'b');
    if (unit.size() > 2 || (unit.size() == 2 && (!lsf || !with_b))) return bad();
    scale = MegabytesPerUnit(unit[0]);
    if (scale == 0) return bad();
  }
  const double megabytes = std::ceil(value * scale);
  if (!std::isfinite(megabytes) || megabytes > 1e15) return bad();
  return static_cast<int64_t>(megabytes);
}

}  // namespace sluice::client::compat
