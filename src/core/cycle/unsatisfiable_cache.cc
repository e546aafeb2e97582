#include "core/cycle/unsatisfiable_cache.h"

namespace sluice::core {

UnsatisfiableCache::Key UnsatisfiableCache::KeyOf(const Job& job) {
  return Key{job.request->fingerprint, job.spec.min_tasks, job.spec.max_tasks, job.spec.exclusive,
             job.spec.user, job.queue, job.spec.project};
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
