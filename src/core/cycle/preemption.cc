#include "core/cycle/preemption.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace sluice::core {
namespace {

// Greedy additions stop here: a job that no 256 victims can make room for is not preempted
// for (bounds the cost of a cycle; documented in docs/design/cycle.md).
constexpr size_t kMaxVictims = 256;

bool BeingPreempted(const Job& job) { return job.preempted_for != kNoJob; }

// Credits a victim's slots and shared resources to `capacity`. `victims_on` counts the
// victims credited per host so far: a host whose running jobs are all victims is idle again.
void CreditVictim(const Job& victim, Capacity& capacity, std::map<HostIndex, int32_t>& victims_on,
                  const ClusterState& state) {
  for (const HostGrant& grant : victim.allocation.hosts) {
    const Host& host = state.topology().hosts()[grant.host];
    capacity.Credit(host, grant, host.SlotsTaken(grant), ++victims_on[grant.host] == host.running_jobs);
  }
  for (const ResourceAmount& amount : victim.allocation.shared) capacity.CreditShared(amount);
}

// The capacity as if `victims` were gone.
Capacity Without(const std::vector<const Job*>& victims, const Capacity& base,
                 const ClusterState& state) {
  Capacity trial = base;
  std::map<HostIndex, int32_t> victims_on;
  for (const Job* victim : victims) CreditVictim(*victim, trial, victims_on, state);
  return trial;
}

bool FitsOn(const Job& job, Capacity& capacity, const CycleContext& ctx) {
  return ctx.allocator.Nominate(job, ctx.state, capacity).ok;
}

// Whether any host of the victim could serve some part of the job's request (in the job's
// queue): victims elsewhere free nothing the job can use.
bool ServesJob(const Job& victim, const Job& job, CycleContext& ctx) {
  const Queue& queue = ctx.state.topology().queues()[job.queue];
  CapacityHostView view(ctx.state, ctx.capacity());
  for (const HostGrant& grant : victim.allocation.hosts) {
    if (!queue.all_hosts && !std::binary_search(queue.hosts.begin(), queue.hosts.end(), grant.host))
      continue;
    view.Bind(grant.host);
    for (const resreq::Compound& alternative : job.request->alternatives) {
      for (const resreq::Primary& part : alternative.parts) {
        if (ctx.state.requests().PassesSelect(part.select, grant.host, view)) return true;
      }
    }
  }
  return false;
}

void Emit(const Job& job, const std::vector<const Job*>& victims, CycleContext& ctx) {
  for (const Job* victim : victims) {
    const Duration grace = ctx.state.topology().queues()[victim->queue].spec.preempt_grace;
    ctx.result.decisions.push_back(PreemptJob{
        .victim = victim->spec.id, .for_job = job.spec.id, .kill_at = AddDuration(ctx.now, grace)});
    ctx.chosen_victims.insert(victim->spec.id);
    ++ctx.result.stats.preempted;
  }
}

// Slots a queue holds, not counting jobs already on their way out.
int64_t StayingSlots(const Queue& queue, const CycleContext& ctx) {
  int64_t slots = ctx.QueueSlots(queue);
  for (const RunningEntry& entry : ctx.state.running()) {
    const Job& job = *entry.job;
    if (job.queue == queue.index &&
        (BeingPreempted(job) || ctx.chosen_victims.contains(job.spec.id))) {
      slots -= job.allocation.TotalSlots();
    }
  }
  return slots;
}

// R-CAP-3 candidates for `job` of a starved queue: repeatedly the most recently started job
// of the queue most over its guarantee whose loss leaves that queue at or above it.
std::vector<const Job*> ReclaimCandidates(const Job& job, CycleContext& ctx) {
  const ClusterState& state = ctx.state;
  std::vector<int64_t> used(state.topology().queues().size());
  std::vector<std::vector<const Job*>> stacks(
      state.topology().queues().size());  // most recent first
  for (const Queue& queue : state.topology().queues()) used[queue.index] = StayingSlots(queue, ctx);
  for (auto it = state.running().rbegin(); it != state.running().rend(); ++it) {
    const Job& running = *it->job;
    if (running.queue == job.queue || BeingPreempted(running) ||
        ctx.chosen_victims.contains(running.spec.id))
      continue;
    if (running.state != JobState::kRunning || !ServesJob(running, job, ctx)) continue;
    stacks[running.queue].push_back(&running);
  }
  std::vector<const Job*> order;
  while (order.size() < kMaxVictims) {
    const Job* best = nullptr;
    double best_ratio = -1;
    for (const Queue& queue : state.topology().queues()) {
      const double guarantee = ctx.loads.of(queue.index).guarantee;
      const double ratio = ctx.loads.Ratio(queue.index, used[queue.index]);
      if (static_cast<double>(used[queue.index]) <= guarantee + 1e-9 || ratio <= best_ratio)
        continue;
      for (const Job* candidate : stacks[queue.index]) {
        const double after =
            static_cast<double>(used[queue.index] - candidate->allocation.TotalSlots());
        if (after + 1e-9 >= guarantee) {  // never take a queue below its guarantee
          best = candidate;
          best_ratio = ratio;
          break;
        }
      }
    }
    if (best == nullptr) break;
    order.push_back(best);
    used[best->queue] -= best->allocation.TotalSlots();
    auto& stack = stacks[best->queue];
    stack.erase(std::find(stack.begin(), stack.end(), best));
  }
  return order;
}

// R-CAP-4 candidates: jobs of preemptable queues of lower priority than the job's, lowest
// queue priority first, then most recently started.
std::vector<const Job*> PriorityCandidates(const Job& job, CycleContext& ctx) {
  const int32_t priority = ctx.state.topology().queues()[job.queue].spec.priority;
  std::vector<const Job*> order;
  for (auto it = ctx.state.running().rbegin(); it != ctx.state.running().rend(); ++it) {
    const Job& running = *it->job;
    const QueueSpec& spec = ctx.state.topology().queues()[running.queue].spec;
    if (!spec.preemptable || spec.priority >= priority) continue;
    if (running.state != JobState::kRunning || BeingPreempted(running) ||
        ctx.chosen_victims.contains(running.spec.id) || !ServesJob(running, job, ctx)) {
      continue;
    }
    order.push_back(&running);
  }
  std::stable_sort(order.begin(), order.end(), [&](const Job* a, const Job* b) {
    return ctx.state.topology().queues()[a->queue].spec.priority <
           ctx.state.topology().queues()[b->queue].spec.priority;
  });
  if (order.size() > kMaxVictims) order.resize(kMaxVictims);
  return order;
}

bool HasPreemptionInQueue(QueueIndex queue, const CycleContext& ctx) {
  for (const auto& [for_job, preemption] : ctx.state.preemptions()) {
    const Job* job = ctx.state.FindJob(for_job);
    // A preemption whose job started this cycle (or left) is over: the queue may need more.
    if (job != nullptr && job->queue == queue && job->state == JobState::kPending &&
        !ctx.StartedThisCycle(*job)) {
      return true;
    }
  }
  return false;
}

bool TryPreempt(const Job& job, const std::vector<const Job*>& candidates, CycleContext& ctx) {
  if (candidates.empty()) return false;
  auto victims = ChooseVictims(job, candidates, ctx.capacity(), ctx);
  if (!victims) return false;
  Emit(job, *victims, ctx);
  return true;
}

}  // namespace

std::optional<std::vector<const Job*>> ChooseVictims(const Job& job,
                                                     const std::vector<const Job*>& candidates,
                                                     const Capacity& base,
                                                     const CycleContext& ctx) {
  std::vector<const Job*> chosen;
  Capacity trial = base;  // `base` with every chosen victim credited, built up one at a time
  std::map<HostIndex, int32_t> victims_on;
  bool fits = false;
  for (const Job* candidate : candidates) {
    chosen.push_back(candidate);
    CreditVictim(*candidate, trial, victims_on, ctx.state);
    if (FitsOn(job, trial, ctx)) {
      fits = true;
      break;
    }
  }
  if (!fits) return std::nullopt;
  // Minimal: drop every victim the job can do without. Fitting is monotone in what is freed,
  // so one pass leaves a set from which no single victim can be dropped.
  for (size_t i = 0; i < chosen.size();) {
    std::vector<const Job*> fewer = chosen;
    fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(i));
    Capacity smaller = Without(fewer, base, ctx.state);
    if (FitsOn(job, smaller, ctx)) {
      chosen = std::move(fewer);
    } else {
      ++i;
    }
  }
  return chosen;
}

void KeepReservations(CycleContext& ctx) {
  for (const auto& [for_job, preemption] : ctx.state.preemptions()) {
    const Job* job = ctx.state.FindJob(for_job);
    if (job == nullptr || job->state != JobState::kPending || ctx.DecidedThisCycle(*job)) {
      ctx.result.decisions.push_back(DropPreemption{for_job});
      continue;
    }
    std::vector<const Job*> running;
    for (JobId id : preemption.victims) {
      const Job* victim = ctx.state.FindJob(id);
      if (victim != nullptr && victim->preempted_for == for_job &&
          (victim->state == JobState::kRunning || victim->state == JobState::kAdmitting)) {
        running.push_back(victim);
      }
    }
    ctx.decided_early.insert(for_job);
    if (running.empty()) {  // everything was freed: start it ahead of every queue
      AllocOutcome outcome = ctx.Nominate(*job);
      if (outcome.ok) {
        ctx.Start(*job, std::move(outcome.allocation), /*backfilled=*/false);
        continue;
      }
      // What was freed went away (a host was lost): back to the normal path.
      ctx.decided_early.erase(for_job);
      ctx.result.decisions.push_back(DropPreemption{for_job});
      continue;
    }
    for (HostIndex h : preemption.hosts) ctx.capacity().Withhold(h, for_job, ctx.now);
    if (ctx.explain) {
      PendingReasons reasons;
      reasons.Add(ReasonDetail{.code = ReasonCode::kPreempting,
                               .hosts = static_cast<int32_t>(preemption.hosts.size()),
                               .used = static_cast<int64_t>(running.size())});
      ctx.Pend(*job, std::move(reasons));
    }
  }
}

void Preempt(CycleContext& ctx) {
  const ClusterState& state = ctx.state;
  std::set<QueueIndex> preempted_now;
  if (ctx.loads.capacities()) {  // R-CAP-3
    for (const Queue& queue : state.topology().queues()) {
      const double guarantee = ctx.loads.of(queue.index).guarantee;
      const Job* blocked = ctx.BlockedHeadOf(queue.index);
      const bool starved =
          blocked != nullptr && static_cast<double>(ctx.QueueSlots(queue)) + 1e-9 < guarantee;
      if (!starved) {
        if (queue.reclaim_deadline)
          ctx.result.decisions.push_back(UpdateReclaim{queue.index, std::nullopt});
        continue;
      }
      if (!queue.reclaim_deadline) {
        const Instant deadline = AddDuration(ctx.now, queue.spec.reclaim_after);
        ctx.result.decisions.push_back(UpdateReclaim{queue.index, deadline});
        if (deadline > ctx.now) {
          ctx.WakeAt(deadline);
          continue;
        }
      } else if (*queue.reclaim_deadline > ctx.now) {
        ctx.WakeAt(*queue.reclaim_deadline);
        continue;
      }
      if (HasPreemptionInQueue(queue.index, ctx)) continue;  // one shortfall, one preemption
      if (TryPreempt(*blocked, ReclaimCandidates(*blocked, ctx), ctx))
        preempted_now.insert(queue.index);
    }
  }
  for (const Queue& queue : state.topology().queues()) {  // R-CAP-4
    const Job* blocked = ctx.BlockedHeadOf(queue.index);
    if (!queue.spec.preemptive || blocked == nullptr || preempted_now.contains(queue.index) ||
        HasPreemptionInQueue(queue.index, ctx)) {
      continue;
    }
    TryPreempt(*blocked, PriorityCandidates(*blocked, ctx), ctx);
  }
}

}  // namespace sluice::core
