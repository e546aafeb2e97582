#include "core/driver/forecast.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>

#include "core/admission/runtime_prediction.h"
#include "core/cycle/events.h"
#include "core/cycle/scheduler.h"
#include "core/driver/drive_loop.h"

namespace sluice::core {
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

// Schedules the end of a running job: start + run limit, no earlier than `now` (in a
// predictive_backfill queue: its predicted end, runtime_prediction.h); a job without either
// is remembered as never ending. Returns whether the end is a prediction.
bool ExpectEnd(const core::ClusterState& state, const core::Job& job, Instant now,
               FinishQueue& finishes, std::set<JobId>& unlimited) {
  const core::ForecastEnd end = core::ExpectedEndForForecast(state, job, now);
  if (end.end == kInfinite) {
    unlimited.insert(job.spec.id);
    return false;
  }
  finishes.push(Finish{end.end, job.spec.id, job.start_seq});
  return end.predicted;
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
    case core::ReasonCode::kReservationDenied:
      return "its reservation does not admit its user";
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
      return "nothing in the forecast frees what it needs (" + std::string(core::ToString(reason)) +
             ")";
  }
}

// Why each job still pends at the end: one explained cycle on the final state.
void ExplainUnknown(const core::ClusterState& state, Instant t, bool horizon,
                    const std::set<JobId>& unlimited, std::map<JobId, StartEstimate>& estimates) {
  core::CycleResult cycle =
      core::Scheduler().RunCycle(state, t, core::CycleOptions{.explain = true});
  std::map<JobId, core::ReasonCode> reason_of;
  for (const core::Decision& decision : cycle.decisions) {
    if (const auto* pend = std::get_if<core::PendJob>(&decision))
      reason_of[pend->job] = pend->reasons.main;
  }
  std::vector<JobId> running_unlimited;
  for (JobId id : unlimited) {
    const core::Job* job = state.FindJob(id);
    if (job != nullptr && job->state == core::JobState::kRunning) running_unlimited.push_back(id);
  }
  for (auto& [id, estimate] : estimates) {
    if (estimate.start || estimate.reason_at_end) continue;
    auto it = reason_of.find(id);
    const core::ReasonCode reason =
        it == reason_of.end() ? core::ReasonCode::kInternal : it->second;
    estimate.reason_at_end = reason;
    estimate.unknown_because = UnknownText(reason, horizon, !running_unlimited.empty());
    if (estimate.unknown_because == kWaitsUnlimited) {
      const size_t listed = std::min(running_unlimited.size(), kWaitsForListed);
      estimate.waits_for.assign(running_unlimited.begin(), running_unlimited.begin() + listed);
      estimate.waits_for_count = static_cast<int64_t>(running_unlimited.size());
    }
  }
}

}  // namespace

namespace {

// The forecast's drive: the finishes to come (step 1 of the drive loop, without arrivals)
// and, as the loop's DecisionHandler, the estimates its cycles settle.
class Forecast final : public core::DecisionHandler {
 public:
  Forecast(core::ClusterState& state, std::map<JobId, StartEstimate>& estimates)
      : state_(state), left_(estimates.size()) {
    // The map's nodes never move: a hash index finds a job's estimate without a tree walk
    // (one lookup per start and per failure; 10,000 starts per refresh).
    by_id_.reserve(estimates.size());
    for (auto& [id, estimate] : estimates) by_id_.emplace(id, &estimate);
  }

  // Running jobs end at their limits, no earlier than `now`.
  void ExpectRunningEnds(Instant now) {
    for (const core::RunningEntry& entry : state_.running())
      predicted_ |= ExpectEnd(state_, *entry.job, now, finishes_, unlimited_);
  }
  Instant NextFinish() const { return finishes_.empty() ? kInfinite : finishes_.top().time; }
  // The finishes due at `t` (or earlier, in a coarse step), by time then job id; a run that
  // preemption cut short has none.
  void ApplyFinishes(Instant t) {
    while (!finishes_.empty() && finishes_.top().time <= t) {
      const Finish finish = finishes_.top();
      finishes_.pop();
      const core::Job* job = state_.FindJob(finish.job);
      if (job == nullptr || job->state != core::JobState::kRunning ||
          job->start_seq != finish.start_seq) {
        continue;
      }
      Status status =
          core::Apply(core::JobFinished{finish.job, 0, core::ExitCause::kNone}, t, state_);
      SLUICE_CHECK(status.ok());
    }
  }
  // As in the simulator: victims leave at once, back to their queues, and another cycle
  // runs at t for the jobs they were preempted for.
  void RequeueVictims(Instant t, core::DriveLoop& loop) {
    SLUICE_CHECK(loop.RequeueAtOnce(victims_, t).ok());
    victims_.clear();
  }

  void OnStart(const core::StartJob& start, Instant now) override {
    predicted_ |= ExpectEnd(state_, *state_.FindJob(start.job), now, finishes_, unlimited_);
    StartEstimate* estimate = Find(start.job);
    if (estimate != nullptr && !estimate->start) {
      estimate->start = now;
      estimate->predicted = predicted_;
      --left_;
    }
  }
  void OnFail(const core::FailJob& fail, Instant /*now*/) override {
    StartEstimate* estimate = Find(fail.job);
    if (estimate != nullptr && !estimate->start && !estimate->reason_at_end) {
      estimate->unknown_because = "it ends " + std::string(core::ToString(fail.cause)) + " instead";
      estimate->reason_at_end = core::ReasonCode::kInternal;
      --left_;
    }
  }
  void OnPreempt(const core::PreemptJob& preempt, Instant /*now*/) override {
    victims_.push_back(preempt);
  }

  size_t left() const { return left_; }  // estimates not settled yet
  const std::set<JobId>& unlimited() const { return unlimited_; }

 private:
  StartEstimate* Find(JobId id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }

  core::ClusterState& state_;
  std::unordered_map<JobId, StartEstimate*> by_id_;  // into the caller's map
  size_t left_;
  FinishQueue finishes_;
  std::set<JobId> unlimited_;
  std::vector<core::PreemptJob> victims_;  // of the cycle just run
  bool predicted_ = false;                 // some end so far came from a prediction (issue 20)
};

}  // namespace

std::map<JobId, StartEstimate> EstimateStarts(const core::ClusterState& state, Instant now,
                                              std::optional<Instant> wake_at,
                                              const EstimateOptions& options) {
  bool any = false;
  for (const core::Queue& queue : state.topology().queues()) any = any || !queue.pending.empty();
  if (!any) return {};
  return EstimateStartsOn(state.Clone(), now, wake_at, options);
}

std::map<JobId, StartEstimate> EstimateStartsOn(core::ClusterState copy, Instant now,
                                                std::optional<Instant> wake_at,
                                                const EstimateOptions& options) {
  std::map<JobId, StartEstimate> estimates;
  for (const core::Queue& queue : copy.topology().queues()) {
    for (const core::PendingEntry& entry : queue.pending) estimates[entry.job->spec.id] = {};
  }
  if (estimates.empty()) return estimates;

  // 1. The forecast's own copy (`copy`); running jobs end at their limits.
  Forecast forecast(copy, estimates);
  forecast.ExpectRunningEnds(now);
  const core::Scheduler scheduler;
  core::DriveLoop loop(scheduler, copy);
  if (wake_at && *wake_at > now) loop.WakeAt(*wake_at);
  if (options.cycle_at_now) loop.WakeAt(now);

  // 2. The drive loop without arrivals: finishes at t, one cycle, repeat.
  int64_t cycles = 0;
  Instant t = now;
  bool horizon = false;
  while (forecast.left() > 0) {
    Instant next = loop.NextTime(forecast.NextFinish());
    if (next == kInfinite) break;
    // Beyond the exact window, one cycle per step of coarse_fraction x the distance so far:
    // what falls due meanwhile waits for the step's end (the estimate errs late, not early).
    if (options.coarse_fraction > 0 && next > t && next - now > options.exact_window) {
      const auto step =
          static_cast<Duration>(static_cast<double>(t - now) * options.coarse_fraction);
      next = std::max(next, t + std::max<Duration>(1, step));
    }
    if (cycles >= options.max_cycles) {
      horizon = true;
      break;
    }
    t = next;
    loop.ClearDueWake(t);
    forecast.ApplyFinishes(t);
    loop.Cycle(t, core::CycleOptions{}, forecast);
    ++cycles;
    forecast.RequeueVictims(t, loop);
  }
  // 3. The rest: unknown, with the reason they still pend.
  if (forecast.left() > 0) ExplainUnknown(copy, t, horizon, forecast.unlimited(), estimates);
  return estimates;
}

}  // namespace sluice::core
