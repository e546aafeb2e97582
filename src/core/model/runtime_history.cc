#include "core/model/runtime_history.h"

#include <algorithm>

namespace sluice::core {

void RuntimeHistory::Record(const std::string& user, Duration runtime) {
  Ring& ring = by_user_[user];
  ring.runtimes[ring.next] = std::max<Duration>(runtime, 0);
  ring.next = (ring.next + 1) % kKept;
  ring.count = std::min(ring.count + 1, kKept);
}

std::optional<Duration> RuntimeHistory::MeanOfLast(const std::string& user, int32_t runs) const {
  auto it = by_user_.find(user);
  if (it == by_user_.end() || runs < 1) return std::nullopt;
  const Ring& ring = it->second;
  const int32_t n = std::min({runs, ring.count, kKept});
  if (n == 0) return std::nullopt;
  Duration sum = 0;
  for (int32_t i = 1; i <= n; ++i) sum += ring.runtimes[(ring.next - i + kKept) % kKept];
  return (sum + n - 1) / n;  // mean = ceil(sum / n)
}

int32_t RuntimeHistory::Count(const std::string& user) const {
  auto it = by_user_.find(user);
  return it == by_user_.end() ? 0 : it->second.count;
}

}  // namespace sluice::core
