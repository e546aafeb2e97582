#include "sim/simulator.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/cycle/events.h"

namespace sluice::sim {
namespace {

struct FinishEvent {
  Instant time = 0;
  JobId job = kNoJob;
  bool killed = false;  // reached its run limit (kill_at_limit)
  uint64_t start_seq = 0;  // the run it ends: a preempted run's finish is stale

  friend bool operator>(const FinishEvent& a, const FinishEvent& b) {
    if (a.time != b.time) return a.time > b.time;
    return a.job > b.job;
  }
};

// Workload position by job id: a dense table when the ids are compact (traces number their
// jobs 1..N), a hash map otherwise. Looked up for every start, finish and cancel.
class IndexOfJob {
 public:
  explicit IndexOfJob(const std::vector<WorkloadJob>& jobs) {
    if (jobs.empty()) return;
    JobId low = jobs.front().spec.id;
    JobId high = low;
    for (const WorkloadJob& job : jobs) {
      low = std::min(low, job.spec.id);
      high = std::max(high, job.spec.id);
    }
    // Unsigned: ids at both ends of the range must not overflow the span.
    const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
    if (span < 4 * static_cast<uint64_t>(jobs.size())) {
      low_ = low;
      dense_.assign(span + 1, kAbsent);
    } else {
      sparse_.reserve(jobs.size());
    }
  }
  // False when `id` is there already.
  bool Add(JobId id, size_t index) {
    if (dense_.empty()) return sparse_.emplace(id, index).second;
    size_t& slot = dense_[static_cast<uint64_t>(id) - static_cast<uint64_t>(low_)];
    if (slot != kAbsent) return false;
    slot = index;
    return true;
  }
  // Every decision names a workload job; an unknown id reads as position 0, as a plain map's
  // operator[] did.
  size_t operator[](JobId id) const {
    if (dense_.empty()) {
      auto it = sparse_.find(id);
      return it == sparse_.end() ? 0 : it->second;
    }
    const uint64_t offset = static_cast<uint64_t>(id) - static_cast<uint64_t>(low_);
    return offset < dense_.size() && dense_[offset] != kAbsent ? dense_[offset] : 0;
  }

 private:
  static constexpr size_t kAbsent = static_cast<size_t>(-1);
  JobId low_ = 0;
  std::vector<size_t> dense_;
  std::unordered_map<JobId, size_t> sparse_;
};

bool DependsOnRejected(const core::JobSpec& spec, const std::unordered_set<JobId>& rejected) {
  if (spec.depend.empty() || rejected.empty()) return false;
  Result<core::Dependency> dependency = core::Dependency::Parse(spec.depend);
  if (!dependency) return false;  // Apply reports the syntax error
  const std::vector<JobId>& named = dependency->jobs();
  return std::any_of(named.begin(), named.end(), [&](JobId id) { return rejected.contains(id); });
}

}  // namespace

Simulator::Simulator(core::ClusterState state, const Workload& workload, SimOptions options)
    : state_(std::move(state)), workload_(workload), options_(std::move(options)) {}

Result<SimResult> Simulator::Run(DecisionSink* sink) {
  const std::vector<WorkloadJob>& jobs = workload_.jobs;
  SimResult result;
  result.records.resize(jobs.size());
  IndexOfJob index_of(jobs);
  state_.ReserveJobs(static_cast<size_t>(state_.job_count()) + jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const core::JobSpec& spec = jobs[i].spec;
    JobRecord& record = result.records[i];
    record.id = spec.id;
    record.user = spec.user;
    record.queue = spec.queue;
    record.slots = spec.min_tasks;
    record.submit = spec.submit_time;
    if (!index_of.Add(spec.id, i)) {
      return InvalidArgument("line " + std::to_string(jobs[i].line) + ": job id " +
                             std::to_string(spec.id) + " appears twice");
    }
  }

  // Submissions by (submit time, id); cancels by (time, id).
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto by_submit_then_id = [&](size_t a, size_t b) {
    if (jobs[a].spec.submit_time != jobs[b].spec.submit_time) {
      return jobs[a].spec.submit_time < jobs[b].spec.submit_time;
    }
    return jobs[a].spec.id < jobs[b].spec.id;
  };
  // Readers sort by submit time and traces number jobs in that order: usually sorted already.
  if (!std::is_sorted(order.begin(), order.end(), by_submit_then_id)) {
    std::stable_sort(order.begin(), order.end(), by_submit_then_id);
  }
  std::vector<std::pair<Instant, JobId>> cancels;
  for (const WorkloadJob& job : jobs) {
    if (job.cancel_at) cancels.emplace_back(std::max(*job.cancel_at, job.spec.submit_time), job.spec.id);
  }
  std::sort(cancels.begin(), cancels.end());
  std::vector<std::pair<Instant, JobId>> releases;
  for (const WorkloadJob& job : jobs) {
    if (job.release_at && job.spec.hold) {
      releases.emplace_back(std::max(*job.release_at, job.spec.submit_time), job.spec.id);
    }
  }
  std::sort(releases.begin(), releases.end());
  std::unordered_set<JobId> rejected;  // lookups only

  std::priority_queue<FinishEvent, std::vector<FinishEvent>, std::greater<>> finishes;
  std::optional<Instant> wake;
  size_t next_submit = 0;
  size_t next_cancel = 0;
  size_t next_release = 0;
  size_t progress_step = std::max<size_t>(1, order.size() / 100);

  // The next event that is not a timer of the core.
  auto next_input_time = [&]() {
    Instant t = kInfinite;
    if (next_submit < order.size()) t = std::min(t, jobs[order[next_submit]].spec.submit_time);
    if (!finishes.empty()) t = std::min(t, finishes.top().time);
    if (next_cancel < cancels.size()) t = std::min(t, cancels[next_cancel].first);
    if (next_release < releases.size()) t = std::min(t, releases[next_release].first);
    return t;
  };
  auto next_event_time = [&]() {
    return wake ? std::min(next_input_time(), *wake) : next_input_time();
  };
  Instant last_progress = 0;  // the last time an input arrived or a cycle started or failed a job

  std::vector<FinishEvent> due;
  std::vector<core::PreemptJob> preempted;
  while (true) {
    const Instant t = next_event_time();
    if (t == kInfinite) break;
    if (options_.pending_at && t > *options_.pending_at) break;
    // With only the core's timers left, nothing running and no begin time to come, a week of
    // wakes that started nothing means no dispatch window (they repeat weekly) will start
    // anything: the run ends instead of waking for ever (a windowed queue's job that waits on
    // closed hosts, say).
    const Instant next_input = next_input_time();
    if (next_input == t) last_progress = t;
    if (next_input == kInfinite && state_.running().empty() && !state_.NextBeginAfter(t) &&
        t - last_progress > core::kSecondsPerWeek) {
      break;
    }
    if (wake && *wake <= t) wake.reset();

    // 1. Finishes at t, by job id (the heap orders equal times by id).
    due.clear();
    while (!finishes.empty() && finishes.top().time == t) {
      due.push_back(finishes.top());
      finishes.pop();
    }
    for (const FinishEvent& event : due) {
      const core::Job* running = state_.FindJob(event.job);
      if (running == nullptr || running->state != core::JobState::kRunning ||
          running->start_seq != event.start_seq) {
        continue;  // cancelled, or a run that preemption cut short
      }
      const core::ExitCause cause = event.killed ? core::ExitCause::kRunLimit : core::ExitCause::kNone;
      SLUICE_RETURN_IF_ERROR(core::Apply(core::JobFinished{event.job, 0, cause}, t, state_));
      JobRecord& record = result.records[index_of[event.job]];
      const core::Job& job = *state_.FindJob(event.job);
      record.end = t;
      record.state = job.state;
      record.cause = job.exit_cause;
      if (sink != nullptr) sink->OnFinish(t, job);
    }
    // 2. Cancels at t: pending or running jobs end CANCELLED; finished ones are left alone.
    for (; next_cancel < cancels.size() && cancels[next_cancel].first == t; ++next_cancel) {
      const JobId id = cancels[next_cancel].second;
      const core::Job* job = state_.FindJob(id);
      if (job == nullptr || core::IsTerminal(job->state)) continue;
      SLUICE_RETURN_IF_ERROR(core::Apply(core::JobCancelled{id}, t, state_));
      JobRecord& record = result.records[index_of[id]];
      record.end = t;
      record.state = core::JobState::kCancelled;
      if (sink != nullptr) sink->OnCancel(t, id);
    }
    // 3. Submissions at t, by job id.
    for (; next_submit < order.size() && jobs[order[next_submit]].spec.submit_time == t;
         ++next_submit) {
      const WorkloadJob& job = jobs[order[next_submit]];
      Status status = DependsOnRejected(job.spec, rejected)
                          ? FailedPrecondition("job " + std::to_string(job.spec.id) +
                                               ": depends on a rejected job")
                          : core::Apply(core::JobSubmitted{job.spec}, t, state_);
      if (status.code() == StatusCode::kFailedPrecondition) {  // refused, not an input error
        rejected.insert(job.spec.id);
        result.records[index_of[job.spec.id]].rejected = true;
        ++result.rejected;
        result.warnings.push_back("line " + std::to_string(job.line) + ": t=" + std::to_string(t) +
                                  ": rejected: " + status.message());
        continue;
      }
      if (!status.ok()) return status.WithPrefix("line " + std::to_string(job.line));
      if (options_.progress && next_submit % progress_step == 0) {
        options_.progress(static_cast<double>(next_submit) / static_cast<double>(order.size()));
      }
    }

    // 4. Releases at t, by job id (a job no longer held, or rejected, is left alone).
    for (; next_release < releases.size() && releases[next_release].first == t; ++next_release) {
      const core::Job* job = state_.FindJob(releases[next_release].second);
      if (job == nullptr || job->state != core::JobState::kHeld) continue;
      SLUICE_RETURN_IF_ERROR(core::Apply(core::JobReleased{job->spec.id}, t, state_));
    }

    // 5. One cycle at t; explained when it may be the last one at or before pending_at.
    const bool explain = options_.explain_every_cycle ||
                         (options_.pending_at && next_event_time() > *options_.pending_at);
    core::CycleResult cycle = scheduler_.RunCycle(state_, t, core::CycleOptions{.explain = explain});
    core::Commit(cycle, t, state_);
    ++result.cycles;
    result.evaluations += cycle.stats.evaluated;
    if (explain && options_.pending_at) {
      result.pending.clear();
      result.pending_time = t;
    }
    for (core::Decision& decision : cycle.decisions) {
      if (std::holds_alternative<core::StartJob>(decision) ||
          std::holds_alternative<core::FailJob>(decision)) {
        last_progress = t;
      }
      if (auto* start = std::get_if<core::StartJob>(&decision)) {
        const WorkloadJob& wjob = jobs[index_of[start->job]];
        JobRecord& record = result.records[index_of[start->job]];
        record.start = t;
        record.slots = start->allocation.TotalSlots();
        record.state = core::JobState::kRunning;
        const bool killed = options_.kill_at_limit && wjob.spec.run_limit &&
                            wjob.runtime > *wjob.spec.run_limit;
        finishes.push(FinishEvent{AddDuration(t, killed ? *wjob.spec.run_limit : wjob.runtime),
                                  start->job, killed, state_.FindJob(start->job)->start_seq});
        if (sink != nullptr) sink->OnStart(t, *state_.FindJob(start->job), state_);
      } else if (auto* fail = std::get_if<core::FailJob>(&decision)) {
        JobRecord& record = result.records[index_of[fail->job]];
        record.end = t;
        record.state = core::JobState::kExit;
        record.cause = fail->cause;
        if (sink != nullptr) sink->OnExit(t, fail->job, fail->cause, fail->message);
      } else if (auto* update = std::get_if<core::UpdateAdmission>(&decision)) {
        JobRecord& record = result.records[index_of[update->job]];
        record.blocked_head = record.blocked_head || update->first_blocked.has_value();
        if (update->gate_since && !record.gate_since) record.gate_since = update->gate_since;
      } else if (auto* pend = std::get_if<core::PendJob>(&decision)) {
        if (options_.pending_at) result.pending.push_back(std::move(*pend));
      } else if (auto* preempt = std::get_if<core::PreemptJob>(&decision)) {
        preempted.push_back(*preempt);
      }
    }
    // Victims honour SIGTERM at once (the grace only bounds how long they may take) and go
    // back to their queues at their original positions; another cycle runs at t
    // (R-SIM-1d) in which the jobs they were preempted for start.
    for (const core::PreemptJob& preempt : preempted) {
      const core::Job& victim = *state_.FindJob(preempt.victim);
      JobRecord& record = result.records[index_of[preempt.victim]];
      ++record.preemptions;
      record.work_lost += static_cast<double>(t - victim.start_time) * victim.allocation.TotalSlots();
      record.start = -1;
      record.state = core::JobState::kPending;
      SLUICE_RETURN_IF_ERROR(core::Apply(core::JobRequeued{preempt.victim}, t, state_));
      if (sink != nullptr) sink->OnPreempt(t, preempt.victim, preempt.for_job);
      wake = t;
    }
    preempted.clear();
    if (cycle.wake_at && *cycle.wake_at > t) wake = std::min(wake.value_or(kInfinite), *cycle.wake_at);
    if (options_.after_cycle) options_.after_cycle(state_, t, cycle);
  }
  if (options_.progress) options_.progress(1.0);
  return result;
}

}  // namespace sluice::sim
