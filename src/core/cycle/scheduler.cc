#include "core/cycle/scheduler.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/admission/eligibility.h"
#include "core/admission/fairshare.h"
#include "core/admission/policy_limits.h"
#include "core/admission/shared_reasons.h"
#include "core/alloc/resreq_allocator.h"
#include "core/cycle/preemption.h"

namespace sluice::core {

Scheduler::Scheduler() : Scheduler(std::make_unique<ResreqAllocator>()) {}

Scheduler::Scheduler(std::unique_ptr<Allocator> allocator) : allocator_(std::move(allocator)) {
  policies_[static_cast<size_t>(PolicyKind::kFifo)] = MakeFifoPolicy();
  policies_[static_cast<size_t>(PolicyKind::kEasyBackfill)] = MakeEasyBackfillPolicy();
  policies_[static_cast<size_t>(PolicyKind::kBoundedBackfill)] = MakeBoundedBackfillPolicy();
  policies_[static_cast<size_t>(PolicyKind::kPredictiveBackfill)] = MakePredictiveBackfillPolicy();
}

Scheduler::~Scheduler() = default;

namespace {

// Empties a hash set the workspace keeps. clear() sweeps every bucket, so a table that one
// big cycle grew is dropped rather than swept again by each later cycle that uses it.
void EmptySet(std::unordered_set<JobId>& set) {
  if (set.empty()) return;
  if (set.bucket_count() > 1024) {
    set = std::unordered_set<JobId>();
  } else {
    set.clear();
  }
}

}  // namespace

CycleContext Scheduler::BeginCycle(const ClusterState& state, Instant now,
                                   const CycleOptions& options, CycleWorkspace& workspace) const {
  // The workspace's bookkeeping, emptied (its buffers kept); the per-queue vectors stay
  // empty until the cycle's first start or blocked head sizes them.
  workspace.started.clear();
  workspace.failed.clear();
  EmptySet(workspace.started_ids);
  workspace.started_jobs_by_queue.clear();
  workspace.started_slots_by_queue.clear();
  EmptySet(workspace.decided_early);
  EmptySet(workspace.chosen_victims);
  workspace.blocked_heads.clear();
  CycleContext ctx{.state = state,
                   .now = now,
                   .allocator = *allocator_,
                   .explain = options.explain,
                   .capacity_ = workspace.capacity,
                   .capacity_built_ = false,
                   .result = {},
                   .started = workspace.started,
                   .failed = workspace.failed,
                   .unsatisfiable = UnsatisfiableCache(state),
                   .started_ids = workspace.started_ids,
                   .started_ids_filled = 0,
                   .started_jobs_by_queue = workspace.started_jobs_by_queue,
                   .started_slots_by_queue = workspace.started_slots_by_queue,
                   .limits = CycleLimits(state),
                   .loads = workspace.loads,  // filled by RunCycle
                   .decided_early = workspace.decided_early,
                   .chosen_victims = workspace.chosen_victims,
                   .blocked_heads = workspace.blocked_heads,
                   .started_user_slots = {}};
  ctx.result.decisions.swap(workspace.decisions);  // a recycled buffer, or none
  if (ctx.explain) {
    // About one decision per waiting job: growing the vector would move it ~20 times.
    size_t waiting = 0;
    for (const Queue& queue : state.topology().queues()) waiting += queue.pending.size();
    ctx.result.decisions.reserve(waiting + 16);
  }
  return ctx;
}

void Scheduler::ClassifyNewJobs(CycleContext& ctx) const {
  // Built only on a memo miss (a few dozen in a trace replay); held by pointer because an
  // empty std::optional<Capacity> still cost ~50 instructions a cycle to set up and tear down.
  std::unique_ptr<Capacity> all_configured;
  for (JobId id : ctx.state.unclassified()) {
    const Job* job = ctx.state.FindJob(id);
    if (job == nullptr || (job->state != JobState::kPending && job->state != JobState::kHeld)) {
      continue;
    }
    const RequestCatalog::FeasibilityKey key{.request = job->request,
                                             .queue = job->queue,
                                             .exclusive = job->spec.exclusive,
                                             .min_tasks = job->spec.min_tasks,
                                             .max_tasks = job->spec.max_tasks};
    auto [it, inserted] = ctx.state.requests().feasibility_memo().try_emplace(key);
    if (inserted) {
      if (!all_configured) {
        all_configured = std::make_unique<Capacity>(Capacity::AllConfigured(ctx.state));
      }
      Feasibility feasibility = allocator_->CheckFeasible(*job, ctx.state, *all_configured);
      it->second = {feasibility.ok, std::move(feasibility.why)};
    }
    std::optional<std::string> why;
    if (!it->second.ok) {
      why = it->second.why;
    } else {
      why = ExceedsPolicyLimits(*job, ctx.state);  // depends on user and project: not memoized
    }
    if (!why) continue;
    ctx.failed.push_back(id);
    ++ctx.result.stats.failed;
    ctx.result.decisions.push_back(FailJob{id, ExitCause::kUnschedulable, std::move(*why)});
  }
  std::sort(ctx.failed.begin(), ctx.failed.end());
}

namespace {

void ExplainInactive(const Queue& queue, CycleContext& ctx) {
  SharedReasons inactive({});
  for (const PendingEntry& entry : queue.pending) {
    if (ctx.DecidedThisCycle(*entry.job)) continue;
    ctx.Pend(*entry.job,
             inactive.For(entry.job->state == JobState::kHeld ? ReasonCode::kHeld
                                                              : ReasonCode::kQueueInactive));
  }
}

// Step 4: the queues in the order they are offered capacity this cycle (R-Q-1).
std::vector<const Queue*> OrderQueues(const CycleContext& ctx) {
  return ctx.loads.Order(ctx.state);
}

// Step 7: begin times and window openings are timers too; the result leaves the context.
CycleResult FinishCycle(CycleContext& ctx) {
  if (auto timer = NextEligibilityTimer(ctx.state, ctx.now)) ctx.WakeAt(*timer);
  return std::move(ctx.result);
}

}  // namespace

void Scheduler::AdmitQueue(const Queue& queue, CycleContext& ctx) const {
  if (queue.pending.empty()) return;
  if (!queue.spec.active) {  // R-Q-1: an inactive queue dispatches nothing
    if (ctx.explain) ExplainInactive(queue, ctx);
    return;
  }
  const AdmissionPolicy* policy = policies_[static_cast<size_t>(queue.spec.policy)].get();
  SLUICE_CHECK(policy != nullptr);  // the constructor makes one for every PolicyKind
  AdmissionContext admission(ctx);
  if (queue.spec.fairshare.empty()) {
    policy->Admit(queue, QueueOrder(queue.pending), admission);
  } else {
    policy->Admit(queue, FairshareOrder(queue, ctx.state, ctx.now), admission);  // R-Q-4
  }
}

CycleResult Scheduler::RunCycle(const ClusterState& state, Instant now, const CycleOptions& options,
                                CycleWorkspace* workspace) const {
  if (workspace == nullptr) {
    // This cycle's buffers, when the caller keeps none. (Not an optional<CycleWorkspace>:
    // GCC zeroed its 700 bytes on every cycle, ~2 % of a trace replay.)
    CycleWorkspace own;
    return RunCycle(state, now, options, &own);
  }
  CycleContext ctx = BeginCycle(state, now, options, *workspace);  // 1.
  ctx.loads.Fill(state, now);
  ClassifyNewJobs(ctx);   // 2.
  KeepReservations(ctx);  // 3.
  if (state.topology().queues().size() == 1) {
    // One queue (a trace replay's cluster): nothing to order, so no order vector per cycle.
    AdmitQueue(state.topology().queues().front(), ctx);  // 4., 5.
  } else {
    for (const Queue* queue : OrderQueues(ctx)) AdmitQueue(*queue, ctx);
  }
  Preempt(ctx);             // 6.
  return FinishCycle(ctx);  // 7.
}

namespace {

// Commit's one body: `Result` is `const CycleResult` (allocations copied) or `CycleResult`
// (allocations moved into the jobs).
template <typename Result>
void CommitResult(Result& result, Instant now, ClusterState& state) {
  for (QueueIndex q = 0; q < result.unavailable_by_queue.size(); ++q) {
    state.AddTotals(q, AdmissionTotals{.temporarily_unavailable = result.unavailable_by_queue[q]});
  }
  for (auto& decision : result.decisions) {
    if (auto* start = std::get_if<StartJob>(&decision)) {
      const Job* started = nullptr;
      if constexpr (std::is_const_v<Result>) {
        started = &state.Start(start->job, start->allocation, now);
      } else {
        started = &state.Start(start->job, std::move(start->allocation), now);
      }
      state.AddTotals(started->queue,
                      AdmissionTotals{.admitted = 1, .backfilled = start->backfilled ? 1 : 0});
    } else if (const auto* fail = std::get_if<FailJob>(&decision)) {
      state.Fail(fail->job, fail->cause, now);
      state.AddTotals(state.FindJob(fail->job)->queue, AdmissionTotals{.unschedulable = 1});
    } else if (const auto* preempt = std::get_if<PreemptJob>(&decision)) {
      state.MarkPreempted(preempt->victim, preempt->for_job);
      state.AddTotals(state.FindJob(preempt->victim)->queue, AdmissionTotals{.preempted = 1});
    } else if (const auto* drop = std::get_if<DropPreemption>(&decision)) {
      state.DropPreemption(drop->for_job);
    } else if (const auto* reclaim = std::get_if<UpdateReclaim>(&decision)) {
      state.SetReclaimDeadline(reclaim->queue, reclaim->deadline);
    } else if (const auto* update = std::get_if<UpdateAdmission>(&decision)) {
      // A record of a job started later in the same cycle is moot.
      const Job* job = state.FindJob(update->job);
      if (job != nullptr && (job->state == JobState::kPending || job->state == JobState::kHeld)) {
        state.UpdateAdmission(update->job, update->bypass_count, update->first_blocked,
                              update->gate_since);
      }
    }
  }
  state.MarkClassified();
  state.RefillArrays();  // started elements make room for the next ones (R-UX-3)
}

}  // namespace

void Commit(const CycleResult& result, Instant now, ClusterState& state) {
  CommitResult(result, now, state);
}

void Commit(CycleResult&& result, Instant now, ClusterState& state) {
  CommitResult(result, now, state);
}

}  // namespace sluice::core
