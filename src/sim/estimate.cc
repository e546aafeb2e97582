#include "sim/estimate.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <string_view>
#include <utility>
#include <variant>

#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"

namespace sluice::sim {
namespace {

struct Finish {
  Instant time = 0;
  JobId job = kNoJob;
  uint64_t start_seq = 0;  // a job preempted and restarted in the forecast has a newer one

  friend bool operator>(const Finish& a, const Finish& b) {
    if (a.time != b.time) return a.time > b.time;
    return a.job > b.job;
  }
};
using FinishQueue = std::priority_queue<Finish, std::vector<Finish>, std::greater<>>;

// Schedules the end of a running job: start + run limit, no earlier than `now`; a job
// without a run limit is remembered as never ending.
void ExpectEnd(const core::Job& job, Instant now, FinishQueue& finishes, std::set<JobId>& unlimited) {
  if (!job.spec.run_limit) {
    unlimited.insert(job.spec.id);
    return;
  }
  finishes.push(Finish{std::max(job.EstimatedEnd(), now), job.spec.id, job.start_seq});
}

constexpr std::string_view kWaitsUnlimited = "it waits for jobs without a run limit";

std::string UnknownText(core::ReasonCode reason, bool horizon, bool unlimited) {
  if (horizon) return "beyond the forecast horizon";
  switch (reason) {
    case core::ReasonCode::kHeld:
      return "it is held";
    case core::ReasonCode::kQueueInactive:
      return "its queue is inactive";
    case core::ReasonCode::kDependency:
      return "its dependency is not satisfied in the forecast";
    case core::ReasonCode::kHostClosed:
      return "the hosts it needs are closed";
    case core::ReasonCode::kHostUnavail:
      return "the hosts it needs are unavailable";
    case core::ReasonCode::kQueueWindow:
      return "its queue's dispatch window does not open in the forecast";
    default:
      break;
  }
  if (unlimited) return std::string(kWaitsUnlimited);
  switch (reason) {
    case core::ReasonCode::kPriorityWait:
    case core::ReasonCode::kGated:
    case core::ReasonCode::kReserved:
    case core::ReasonCode::kFairshare:
      return "the job ahead of it does not start in the forecast";
    default:
      return "nothing in the forecast frees what it needs (" + std::string(core::ToString(reason)) + ")";
  }
}

// Why each job still pends at the end: one explained cycle on the final state.
void ExplainUnknown(const core::ClusterState& state, Instant t, bool horizon,
                    const std::set<JobId>& unlimited, std::map<JobId, StartEstimate>& estimates) {
  core::CycleResult cycle = core::Scheduler().RunCycle(state, t, core::CycleOptions{.explain = true});
  std::map<JobId, core::ReasonCode> reason_of;
  for (const core::Decision& decision : cycle.decisions) {
    if (const auto* pend = std::get_if<core::PendJob>(&decision)) reason_of[pend->job] = pend->reasons.main;
  }
  std::vector<JobId> running_unlimited;
  for (JobId id : unlimited) {
    const core::Job* job = state.FindJob(id);
    if (job != nullptr && job->state == core::JobState::kRunning) running_unlimited.push_back(id);
  }
  for (auto& [id, estimate] : estimates) {
    if (estimate.start || estimate.reason_at_end) continue;
    auto it = reason_of.find(id);
    const core::ReasonCode reason = it == reason_of.end() ? core::ReasonCode::kInternal : it->second;
    estimate.reason_at_end = reason;
    estimate.unknown_because = UnknownText(reason, horizon, !running_unlimited.empty());
    if (estimate.unknown_because == kWaitsUnlimited) estimate.waits_for = running_unlimited;
  }
}

}  // namespace

std::map<JobId, StartEstimate> EstimateStarts(const core::ClusterState& state, Instant now,
                                              std::optional<Instant> wake_at,
                                              const EstimateOptions& options) {
  std::map<JobId, StartEstimate> estimates;
  for (const core::Queue& queue : state.queues()) {
    for (const core::PendingEntry& entry : queue.pending) estimates[entry.job->spec.id] = {};
  }
  if (estimates.empty()) return estimates;

  // 1. The forecast's own copy; running jobs end at their limits.
  core::ClusterState forecast = state.Clone();
  FinishQueue finishes;
  std::set<JobId> unlimited;
  for (const core::RunningEntry& entry : forecast.running()) ExpectEnd(*entry.job, now, finishes, unlimited);
  std::optional<Instant> wake;
  if (wake_at && *wake_at > now) wake = wake_at;

  // 2. The simulator's loop without arrivals: finishes at t, one cycle, repeat.
  const core::Scheduler scheduler;
  size_t left = estimates.size();
  int64_t cycles = 0;
  Instant t = now;
  bool horizon = false;
  while (left > 0) {
    const Instant next = std::min(finishes.empty() ? kInfinite : finishes.top().time, wake.value_or(kInfinite));
    if (next == kInfinite) break;
    if (cycles >= options.max_cycles) {
      horizon = true;
      break;
    }
    t = next;
    if (wake && *wake <= t) wake.reset();
    while (!finishes.empty() && finishes.top().time == t) {
      const Finish finish = finishes.top();
      finishes.pop();
      const core::Job* job = forecast.FindJob(finish.job);
      if (job == nullptr || job->state != core::JobState::kRunning || job->start_seq != finish.start_seq) {
        continue;
      }
      Status status = core::Apply(core::JobFinished{finish.job, 0, core::ExitCause::kNone}, t, forecast);
      SLUICE_CHECK(status.ok());
    }
    core::CycleResult cycle = scheduler.RunCycle(forecast, t);
    core::Commit(cycle, t, forecast);
    ++cycles;
    std::vector<JobId> victims;
    for (const core::Decision& decision : cycle.decisions) {
      if (const auto* start = std::get_if<core::StartJob>(&decision)) {
        ExpectEnd(*forecast.FindJob(start->job), t, finishes, unlimited);
        auto it = estimates.find(start->job);
        if (it != estimates.end() && !it->second.start) {
          it->second.start = t;
          --left;
        }
      } else if (const auto* fail = std::get_if<core::FailJob>(&decision)) {
        auto it = estimates.find(fail->job);
        if (it != estimates.end() && !it->second.start && !it->second.reason_at_end) {
          it->second.unknown_because = "it ends " + std::string(core::ToString(fail->cause)) + " instead";
          it->second.reason_at_end = core::ReasonCode::kInternal;
          --left;
        }
      } else if (const auto* preempt = std::get_if<core::PreemptJob>(&decision)) {
        victims.push_back(preempt->victim);
      }
    }
    // As in the simulator: victims leave at once, back to their queues, and another cycle
    // runs at t for the jobs they were preempted for.
    for (JobId victim : victims) {
      SLUICE_CHECK(core::Apply(core::JobRequeued{victim}, t, forecast).ok());
      wake = t;
    }
    if (cycle.wake_at && *cycle.wake_at > t) wake = std::min(wake.value_or(kInfinite), *cycle.wake_at);
  }
  // 3. The rest: unknown, with the reason they still pend.
  if (left > 0) ExplainUnknown(forecast, t, horizon, unlimited, estimates);
  return estimates;
}

}  // namespace sluice::sim
