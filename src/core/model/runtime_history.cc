#include "core/model/runtime_history.h"

#include <algorithm>

namespace sluice::core {
namespace {

// The first of a user's (run limit, ring) entries whose limit is not below `run_limit`: its
// ring, or where that ring goes. For the const and the mutable history alike.
template <typename Entries>
auto LowerBound(Entries& by_limit, Duration run_limit) {
  return std::lower_bound(by_limit.begin(), by_limit.end(), run_limit,
                          [](const auto& entry, Duration limit) { return entry.first < limit; });
}

}  // namespace

void RuntimeHistory::Ring::Add(Duration runtime) {
  runtimes[next] = std::max<Duration>(runtime, 0);
  next = (next + 1) % kKept;
  count = std::min(count + 1, kKept);
}

std::optional<Duration> RuntimeHistory::Ring::MeanOfLast(int32_t runs) const {
  const int32_t n = std::min({runs, count, kKept});
  if (n < 1) return std::nullopt;
  Duration sum = 0;
  for (int32_t i = 1; i <= n; ++i) sum += runtimes[(next - i + kKept) % kKept];
  return (sum + n - 1) / n;  // mean = ceil(sum / n)
}

void RuntimeHistory::Record(const std::string& user, Duration runtime,
                            std::optional<Duration> run_limit) {
  UserHistory& history = by_user_[user];
  history.all.Add(runtime);
  if (!run_limit) return;
  auto at = LowerBound(history.by_limit, *run_limit);
  if (at == history.by_limit.end() || at->first != *run_limit) {
    at = history.by_limit.insert(at, {*run_limit, Ring{}});
  }
  at->second.Add(runtime);
}

std::optional<Duration> RuntimeHistory::MeanOfLast(const std::string& user, int32_t runs) const {
  auto it = by_user_.find(user);
  if (it == by_user_.end()) return std::nullopt;
  return it->second.all.MeanOfLast(runs);
}

std::optional<Duration> RuntimeHistory::MeanOfLastWithLimit(const std::string& user,
                                                            Duration run_limit,
                                                            int32_t runs) const {
  auto it = by_user_.find(user);
  if (it == by_user_.end()) return std::nullopt;
  auto at = LowerBound(it->second.by_limit, run_limit);
  if (at == it->second.by_limit.end() || at->first != run_limit) return std::nullopt;
  return at->second.MeanOfLast(runs);
}

int32_t RuntimeHistory::Count(const std::string& user) const {
  auto it = by_user_.find(user);
  return it == by_user_.end() ? 0 : it->second.all.count;
}

}  // namespace sluice::core
