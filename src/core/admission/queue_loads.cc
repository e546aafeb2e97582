#include "core/admission/queue_loads.h"

#include <algorithm>
#include <limits>

#include "core/admission/eligibility.h"

namespace sluice::core {

QueueLoads QueueLoads::Compute(const ClusterState& state, Instant now) {
  QueueLoads loads;
  loads.Fill(state, now);
  return loads;
}

void QueueLoads::Fill(const ClusterState& state, Instant now) {
  QueueLoads& loads = *this;
  loads.capacities_ = false;
  const double total = static_cast<double>(state.topology().total_slots());
  bool user_limits = false;
  for (const Queue& queue : state.topology().queues()) {
    if (queue.spec.capacity) loads.capacities_ = true;
    if (queue.spec.user_limit_pct > 0) user_limits = true;
  }
  loads.loads_.resize(state.topology().queues().size());
  for (const Queue& queue : state.topology().queues()) {
    QueueLoad& load = loads.loads_[queue.index];
    load.runnable = false;
    load.user_slots.clear();
    load.active_users.clear();
    // SPEC §2: when some queue sets a capacity, a queue without one is guaranteed 0.
    load.guarantee = queue.spec.capacity.value_or(0) / 100.0 * total;
    load.maximum = queue.spec.max_capacity / 100.0 * total;
    const bool per_user = queue.spec.user_limit_pct > 0;
    // Only capacity ordering and user limits read runnable work: skip the scan (which
    // walks the whole queue when nothing in it is eligible) when neither applies.
    if (!loads.capacities_ && !per_user) continue;
    for (const PendingEntry& entry : queue.pending) {
      if (!IsEligible(*entry.job, state, now)) continue;
      load.runnable = true;
      if (!per_user) break;  // one runnable job is enough to know
      ++load.active_users[entry.job->spec.user];
    }
  }
  if (!user_limits) return;  // the running jobs matter only to user limits
  for (const RunningEntry& entry : state.running()) {
    const Job& job = *entry.job;
    if (state.topology().queues()[job.queue].spec.user_limit_pct <= 0) continue;
    QueueLoad& load = loads.loads_[job.queue];
    load.user_slots[job.spec.user] += job.allocation.TotalSlots();
    load.active_users.try_emplace(job.spec.user, 0);
  }
}

double QueueLoads::Ratio(QueueIndex q, int64_t used) const {
  const double guarantee = loads_[q].guarantee;
  if (guarantee <= 0) return used == 0 ? 0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(used) / guarantee;
}

std::vector<const Queue*> QueueLoads::Order(const ClusterState& state) const {
  std::vector<const Queue*> order;
  order.reserve(state.topology().queues().size());
  for (const Queue& queue : state.topology().queues()) order.push_back(&queue);
  auto by_priority = [](const Queue* a, const Queue* b) {
    if (a->spec.priority != b->spec.priority) return a->spec.priority > b->spec.priority;
    return a->spec.name < b->spec.name;
  };
  if (!capacities_) {
    std::sort(order.begin(), order.end(), by_priority);
    return order;
  }
  auto starved = [&](const Queue* q) {
    return loads_[q->index].runnable &&
           static_cast<double>(q->used_slots) < loads_[q->index].guarantee;
  };
  std::sort(order.begin(), order.end(), [&](const Queue* a, const Queue* b) {
    if (starved(a) != starved(b)) return starved(a);
    const double ra = Ratio(a->index, a->used_slots);
    const double rb = Ratio(b->index, b->used_slots);
    if (ra != rb) return ra < rb;
    return by_priority(a, b);
  });
  return order;
}

}  // namespace sluice::core
