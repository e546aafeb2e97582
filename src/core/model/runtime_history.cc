#include "core/model/runtime_history.h"

#include <algorithm>
#include <utility>

namespace sluice::core {

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
  Ring* ring = history.FindLimit(*run_limit);
  if (ring == nullptr) {
    auto at =
        std::lower_bound(history.by_limit.begin(), history.by_limit.end(), *run_limit,
                         [](const auto& entry, Duration limit) { return entry.first < limit; });
    ring = &history.by_limit.insert(at, {*run_limit, Ring{}})->second;
  }
  ring->Add(runtime);
}

const RuntimeHistory::Ring* RuntimeHistory::UserHistory::FindLimit(Duration run_limit) const {
  auto at = std::lower_bound(by_limit.begin(), by_limit.end(), run_limit,
                             [](const auto& entry, Duration limit) { return entry.first < limit; });
  return at != by_limit.end() && at->first == run_limit ? &at->second : nullptr;
}

RuntimeHistory::Ring* RuntimeHistory::UserHistory::FindLimit(Duration run_limit) {
  return const_cast<Ring*>(std::as_const(*this).FindLimit(run_limit));
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
  const Ring* ring = it->second.FindLimit(run_limit);
  if (ring == nullptr) return std::nullopt;
  return ring->MeanOfLast(runs);
}

int32_t RuntimeHistory::Count(const std::string& user) const {
  auto it = by_user_.find(user);
  return it == by_user_.end() ? 0 : it->second.all.count;
}

}  // namespace sluice::core
