#include "core/admission/unsatisfiable_cache.h"

#include <functional>

namespace sluice::core {

UnsatisfiableCache::UnsatisfiableCache(const ClusterState& state)
    : by_consumer_(!state.config().limits.empty()),
      by_reservation_(!state.reservations().empty()) {}

size_t UnsatisfiableCache::KeyHash::operator()(const Key& key) const {
  uint64_t h = key.fingerprint;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ULL + (h >> 29); };
  mix(static_cast<uint64_t>(static_cast<uint32_t>(key.min_tasks)) << 32 |
      static_cast<uint32_t>(key.max_tasks));
  mix(static_cast<uint64_t>(key.queue) << 1 | (key.exclusive ? 1 : 0));
  if (!key.user.empty()) mix(std::hash<std::string_view>{}(key.user));
  if (!key.project.empty()) mix(std::hash<std::string_view>{}(key.project));
  mix(static_cast<uint64_t>(key.run_limit));
  if (!key.reservation.empty()) mix(std::hash<std::string_view>{}(key.reservation));
  return static_cast<size_t>(h);
}

UnsatisfiableCache::Key UnsatisfiableCache::KeyOf(const Job& job) const {
  Key key{.fingerprint = job.request->fingerprint,
          .min_tasks = job.spec.min_tasks,
          .max_tasks = job.spec.max_tasks,
          .queue = job.queue,
          .exclusive = job.spec.exclusive};
  if (by_consumer_) {
    key.user = job.spec.user;
    key.project = job.spec.project;
  }
  if (by_reservation_) {
    key.run_limit = job.spec.run_limit.value_or(-1);
    key.reservation = job.spec.reservation;
  }
  return key;
}

const PendingReasons* UnsatisfiableCache::Find(const Job& job) const {
  auto it = entries_.find(KeyOf(job));
  if (it == entries_.end()) return nullptr;
  if (it->second.request != job.request && !(*it->second.request == *job.request)) return nullptr;
  return &it->second.reasons;
}

void UnsatisfiableCache::Insert(const Job& job, const PendingReasons& reasons) {
  entries_.try_emplace(KeyOf(job), Entry{job.request, reasons});
}

}  // namespace sluice::core
