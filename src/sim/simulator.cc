#include "sim/simulator.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/array_ids.h"
#include "core/cycle/events.h"
#include "core/driver/drive_loop.h"
#include "core/model/job_array.h"

namespace sluice::sim {
namespace {

struct FinishEvent {
  Instant time = 0;
  JobId job = kNoJob;
  bool killed = false;     // reached its run limit (kill_at_limit)
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

// How long a workload job runs once started: its runtime, or its run limit when
// kill_at_limit cuts it there. Kept apart from the jobs (16 bytes, not a WorkloadJob's ~380)
// because every start reads it at a job the replay has not touched since its submission.
struct RunLength {
  Duration duration = 0;
  bool killed = false;  // reaches its run limit (kill_at_limit)
};

// `run` of a job inside an advance reservation, started at `now`, cut at its window's end +
// overrun (the core starts it only while a window is open).
RunLength EndWithReservation(RunLength run, const core::Job& job, const core::ReservationBook& book,
                             Instant now) {
  const int32_t r = book.Find(job.spec.reservation);
  const std::optional<core::ReservationWindow> window = r >= 0 ? book.OpenWindow(r, now)
                                                               : std::nullopt;
  if (!window) return run;
  const Instant cut = AddDuration(window->end, book.spec(r).overrun);
  if (AddDuration(now, run.duration) <= cut) return run;
  return RunLength{.duration = cut - now, .killed = true};
}

// (time, job id) inputs of the workload, sorted: cancels, and releases of held jobs.
using TimedInputs = std::vector<std::pair<Instant, JobId>>;

// One run: the workload's inputs still to come, the finishes of the jobs it started, and the
// records. It applies the inputs due at a time (step 1 of the drive loop) and is the loop's
// DecisionHandler: records, sink calls and finishes follow from the decisions.
class Replay final : public core::DecisionHandler {
 public:
  Replay(const Workload& workload, core::ClusterState& state, const SimOptions& options,
         DecisionSink* sink, SimResult& result)
      : jobs_(workload.jobs),
        state_(state),
        options_(options),
        sink_(sink),
        result_(result),
        index_of_(jobs_),
        gpu_usage_(state.topology()) {}

  // The records, the id index and the input order. Errors: a job id that appears twice.
  Status Prepare();
  // The next time an input is due (a submission, a finish, a cancel or a release), or
  // kInfinite: every timer of the core is the drive loop's.
  Instant NextInputTime() const;
  // Whether the run should end at `t` though a timer of the core is due (see Run).
  bool Stalled(Instant t, Instant next_input);
  // Step 1 at `t`: finishes, cancels, submissions, then releases, each by job id.
  Status ApplyInputs(Instant t);
  // Victims of the cycle at `t` leave at once and go back to their queues (R-SIM-1d).
  Status RequeueVictims(Instant t, core::DriveLoop& loop);

  void OnStart(const core::StartJob& start, Instant now) override;
  void OnFail(const core::FailJob& fail, Instant now) override;
  void OnPend(core::PendJob& pend, Instant now) override;
  void OnPreempt(const core::PreemptJob& preempt, Instant now) override;
  void OnUpdate(const core::UpdateAdmission& update, Instant now) override;

  const GpuTotals& gpu_totals() const { return gpu_usage_.totals(); }

 private:
  JobRecord& RecordOf(JobId id) {
    if (IsArrayElement(id)) {
      auto it = element_records_.find(id);
      if (it != element_records_.end()) return result_.records[it->second];
    }
    return result_.records[index_of_[id]];
  }
  // Array elements (R-UX-3) get records after the workload's, one per index.
  Status AddElementRecords(const WorkloadJob& job);
  Status ApplyFinishes(Instant t);
  Status ApplyCancels(Instant t);
  Status ApplySubmissions(Instant t);
  Status ApplyReleases(Instant t);

  const std::vector<WorkloadJob>& jobs_;
  core::ClusterState& state_;
  const SimOptions& options_;
  DecisionSink* sink_;
  SimResult& result_;
  IndexOfJob index_of_;
  GpuUsage gpu_usage_;  // every allocation's devices from its start to its release
  std::unordered_map<JobId, size_t> element_records_;  // lookups only
  std::vector<size_t> order_;                          // submissions by (submit time, id)
  std::vector<RunLength> run_lengths_;                 // by workload position
  TimedInputs cancels_;
  TimedInputs releases_;
  std::unordered_set<JobId> rejected_;  // lookups only
  std::priority_queue<FinishEvent, std::vector<FinishEvent>, std::greater<>> finishes_;
  std::vector<FinishEvent> due_;
  std::vector<core::PreemptJob> preempted_;  // by the cycle just run
  size_t next_submit_ = 0;
  size_t next_cancel_ = 0;
  size_t next_release_ = 0;
  size_t progress_step_ = 1;
  Instant last_progress_ = 0;  // the last time an input arrived or a cycle started or failed a job
};

// One pass over the workload for the records, the index, the inputs and the order check
// (each pass over 200,000 jobs of a few hundred bytes reads the whole workload again).
Status Replay::Prepare() {
  result_.records.resize(jobs_.size());
  run_lengths_.resize(jobs_.size());
  state_.ReserveJobs(static_cast<size_t>(state_.job_count()) + jobs_.size());
  auto by_submit_then_id = [&](size_t a, size_t b) {
    if (jobs_[a].spec.submit_time != jobs_[b].spec.submit_time) {
      return jobs_[a].spec.submit_time < jobs_[b].spec.submit_time;
    }
    return jobs_[a].spec.id < jobs_[b].spec.id;
  };
  bool arrays = false;
  bool sorted = true;
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const WorkloadJob& job = jobs_[i];
    const core::JobSpec& spec = job.spec;
    JobRecord& record = result_.records[i];
    record.id = spec.id;
    record.user = spec.user;
    record.queue = spec.queue;
    record.slots = spec.min_tasks;
    record.submit = spec.submit_time;
    const bool killed = options_.kill_at_limit && spec.run_limit && job.runtime > *spec.run_limit;
    run_lengths_[i] =
        RunLength{.duration = killed ? *spec.run_limit : job.runtime, .killed = killed};
    if (!index_of_.Add(spec.id, i)) {
      return InvalidArgument("line " + std::to_string(job.line) + ": job id " +
                             std::to_string(spec.id) + " appears twice");
    }
    arrays = arrays || !job.array.empty();
    if (i > 0 && sorted && by_submit_then_id(i, i - 1)) sorted = false;
    if (job.cancel_at) cancels_.emplace_back(std::max(*job.cancel_at, spec.submit_time), spec.id);
    if (job.release_at && spec.hold) {
      releases_.emplace_back(std::max(*job.release_at, spec.submit_time), spec.id);
    }
  }
  if (arrays) {
    for (const WorkloadJob& job : jobs_) {
      if (!job.array.empty()) SLUICE_RETURN_IF_ERROR(AddElementRecords(job));
    }
  }
  order_.resize(jobs_.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  // Readers sort by submit time and traces number jobs in that order: usually sorted already.
  if (!sorted) std::stable_sort(order_.begin(), order_.end(), by_submit_then_id);
  std::sort(cancels_.begin(), cancels_.end());
  std::sort(releases_.begin(), releases_.end());
  progress_step_ = std::max<size_t>(1, order_.size() / 100);
  return Status::Ok();
}

Status Replay::AddElementRecords(const WorkloadJob& job) {
  Result<core::ArraySpec> array = core::ParseArraySpec(job.array);
  if (!array) return array.error().WithPrefix("line " + std::to_string(job.line));
  result_.records[index_of_[job.spec.id]].is_array = true;
  for (int32_t index : array->indices) {
    JobRecord record = result_.records[index_of_[job.spec.id]];
    record.is_array = false;
    record.id = ArrayElementId(job.spec.id, index);
    element_records_.emplace(record.id, result_.records.size());
    result_.records.push_back(std::move(record));
  }
  return Status::Ok();
}

Instant Replay::NextInputTime() const {
  Instant t = kInfinite;
  if (next_submit_ < order_.size()) t = std::min(t, jobs_[order_[next_submit_]].spec.submit_time);
  if (!finishes_.empty()) t = std::min(t, finishes_.top().time);
  if (next_cancel_ < cancels_.size()) t = std::min(t, cancels_[next_cancel_].first);
  if (next_release_ < releases_.size()) t = std::min(t, releases_[next_release_].first);
  return t;
}

bool Replay::Stalled(Instant t, Instant next_input) {
  if (next_input == t) last_progress_ = t;
  return next_input == kInfinite && state_.running().empty() && !state_.NextBeginAfter(t) &&
         t - last_progress_ > core::kSecondsPerWeek;
}

Status Replay::ApplyInputs(Instant t) {
  SLUICE_RETURN_IF_ERROR(ApplyFinishes(t));
  SLUICE_RETURN_IF_ERROR(ApplyCancels(t));
  SLUICE_RETURN_IF_ERROR(ApplySubmissions(t));
  return ApplyReleases(t);
}

// Finishes at t, by job id (the heap orders equal times by id).
Status Replay::ApplyFinishes(Instant t) {
  due_.clear();
  while (!finishes_.empty() && finishes_.top().time == t) {
    due_.push_back(finishes_.top());
    finishes_.pop();
  }
  for (const FinishEvent& event : due_) {
    const core::Job* running = state_.FindJob(event.job);
    if (running == nullptr || running->state != core::JobState::kRunning ||
        running->start_seq != event.start_seq) {
      continue;  // cancelled, or a run that preemption cut short
    }
    const core::ExitCause cause =
        event.killed ? core::ExitCause::kRunLimit : core::ExitCause::kNone;
    gpu_usage_.Release(t, running->allocation);  // before Apply, which clears it
    SLUICE_RETURN_IF_ERROR(core::Apply(core::JobFinished{event.job, 0, cause}, t, state_));
    JobRecord& record = RecordOf(event.job);
    const core::Job& job = *running;  // the table's nodes stay where they are
    record.end = t;
    record.state = job.state;
    record.cause = job.exit_cause;
    if (sink_ != nullptr) sink_->OnFinish(t, job);
  }
  return Status::Ok();
}

// Cancels at t: pending or running jobs end CANCELLED; finished ones are left alone.
Status Replay::ApplyCancels(Instant t) {
  for (; next_cancel_ < cancels_.size() && cancels_[next_cancel_].first == t; ++next_cancel_) {
    const JobId id = cancels_[next_cancel_].second;
    const core::Job* job = state_.FindJob(id);
    if (job == nullptr || core::IsTerminal(job->state)) continue;
    gpu_usage_.Release(t, job->allocation);  // a running job's devices; none for a pending one
    SLUICE_RETURN_IF_ERROR(core::Apply(core::JobCancelled{id}, t, state_));
    JobRecord& record = RecordOf(id);
    record.end = t;
    record.state = core::JobState::kCancelled;
    if (sink_ != nullptr) sink_->OnCancel(t, id);
  }
  return Status::Ok();
}

// Submissions at t, by job id. One the core refuses (closed queue) is recorded as rejected.
Status Replay::ApplySubmissions(Instant t) {
  for (; next_submit_ < order_.size() && jobs_[order_[next_submit_]].spec.submit_time == t;
       ++next_submit_) {
    const WorkloadJob& job = jobs_[order_[next_submit_]];
    Status status;
    if (DependsOnRejected(job.spec, rejected_)) {
      status =
          FailedPrecondition("job " + std::to_string(job.spec.id) + ": depends on a rejected job");
    } else {
      // The event is built in place: a JobSubmitted converted into an Event would move its
      // spec (seven strings) once more. (Filled after construction: clang 14, which builds
      // the fuzz targets, has no parenthesized aggregate initialization.)
      core::Event event(std::in_place_type<core::JobSubmitted>);
      auto& submitted = std::get<core::JobSubmitted>(event);
      submitted.spec = job.spec;
      submitted.array = job.array;
      status = core::Apply(std::move(event), t, state_);
    }
    if (status.code() == StatusCode::kFailedPrecondition) {  // refused, not an input error
      rejected_.insert(job.spec.id);
      RecordOf(job.spec.id).rejected = true;
      ++result_.rejected;
      result_.warnings.push_back("line " + std::to_string(job.line) + ": t=" + std::to_string(t) +
                                 ": rejected: " + status.message());
      continue;
    }
    if (!status.ok()) return status.WithPrefix("line " + std::to_string(job.line));
    if (options_.progress && next_submit_ % progress_step_ == 0) {
      options_.progress(static_cast<double>(next_submit_) / static_cast<double>(order_.size()));
    }
  }
  return Status::Ok();
}

// Releases at t, by job id (a job no longer held, or rejected, is left alone).
Status Replay::ApplyReleases(Instant t) {
  for (; next_release_ < releases_.size() && releases_[next_release_].first == t; ++next_release_) {
    const core::Job* job = state_.FindJob(releases_[next_release_].second);
    if (job == nullptr || job->state != core::JobState::kHeld) continue;
    SLUICE_RETURN_IF_ERROR(core::Apply(core::JobReleased{job->spec.id}, t, state_));
  }
  return Status::Ok();
}

// A job started at t ends at t + runtime, or at t + run_limit when kill_at_limit cuts it;
// a job inside an advance reservation at the latest when its window ends (+ overrun), as
// if that were its run limit (R-RSV-2).
void Replay::OnStart(const core::StartJob& start, Instant now) {
  last_progress_ = now;
  RunLength run = run_lengths_[index_of_[ArrayIdOf(start.job)]];
  const core::Job& job = *state_.FindJob(start.job);  // holds the allocation (DriveLoop)
  if (!job.spec.reservation.empty()) {
    run = EndWithReservation(run, job, state_.reservations(), now);
  }
  JobRecord& record = RecordOf(start.job);
  record.start = now;
  record.slots = job.allocation.TotalSlots();
  record.state = core::JobState::kRunning;
  finishes_.push(FinishEvent{AddDuration(now, run.duration), start.job, run.killed, job.start_seq});
  gpu_usage_.Hold(now, job.allocation);
  if (sink_ != nullptr) sink_->OnStart(now, job, state_);
}

void Replay::OnFail(const core::FailJob& fail, Instant now) {
  last_progress_ = now;
  JobRecord& record = RecordOf(fail.job);
  record.end = now;
  record.state = core::JobState::kExit;
  record.cause = fail.cause;
  if (sink_ != nullptr) sink_->OnExit(now, fail.job, fail.cause, fail.message);
}

void Replay::OnPend(core::PendJob& pend, Instant /*now*/) {
  if (options_.pending_at) result_.pending.push_back(std::move(pend));
}

void Replay::OnPreempt(const core::PreemptJob& preempt, Instant /*now*/) {
  preempted_.push_back(preempt);
}

void Replay::OnUpdate(const core::UpdateAdmission& update, Instant /*now*/) {
  JobRecord& record = RecordOf(update.job);
  record.blocked_head = record.blocked_head || update.first_blocked.has_value();
  if (update.gate_since && !record.gate_since) record.gate_since = update.gate_since;
}

// Victims honour SIGTERM at once (the grace only bounds how long they may take) and go back
// to their queues at their original positions; another cycle runs at t in which the jobs
// they were preempted for start.
Status Replay::RequeueVictims(Instant t, core::DriveLoop& loop) {
  for (const core::PreemptJob& preempt : preempted_) {
    const core::Job& victim = *state_.FindJob(preempt.victim);
    JobRecord& record = RecordOf(preempt.victim);
    ++record.preemptions;
    record.work_lost += static_cast<double>(t - victim.start_time) * victim.allocation.TotalSlots();
    gpu_usage_.Release(t, victim.allocation);
    record.start = -1;
    record.state = core::JobState::kPending;
  }
  SLUICE_RETURN_IF_ERROR(loop.RequeueAtOnce(preempted_, t));
  if (sink_ != nullptr) {
    for (const core::PreemptJob& preempt : preempted_)
      sink_->OnPreempt(t, preempt.victim, preempt.for_job);
  }
  preempted_.clear();
  return Status::Ok();
}

}  // namespace

Simulator::Simulator(core::ClusterState state, const Workload& workload, SimOptions options)
    : state_(std::move(state)), workload_(workload), options_(std::move(options)) {}

Result<SimResult> Simulator::Run(DecisionSink* sink) {
  SimResult result;
  Replay replay(workload_, state_, options_, sink, result);
  SLUICE_RETURN_IF_ERROR(replay.Prepare());
  if (!workload_.reservations.empty()) {
    const Status set = core::Apply(core::ReservationsChanged{workload_.reservations}, 0, state_);
    if (!set.ok()) return InvalidArgument("workload: " + set.message());
  }
  core::DriveLoop loop(scheduler_, state_);
  while (true) {
    const Instant next_input = replay.NextInputTime();
    const Instant t = loop.NextTime(next_input);
    if (t == kInfinite) break;
    if (options_.pending_at && t > *options_.pending_at) break;
    // With only the core's timers left, nothing running and no begin time to come, a week of
    // wakes that started nothing means no dispatch window (they repeat weekly) will start
    // anything: the run ends instead of waking for ever (a windowed queue's job that waits on
    // closed hosts, say).
    if (replay.Stalled(t, next_input)) break;
    loop.ClearDueWake(t);
    SLUICE_RETURN_IF_ERROR(replay.ApplyInputs(t));
    // Explained when it may be the last cycle at or before pending_at.
    const bool explain =
        options_.explain_every_cycle ||
        (options_.pending_at && loop.NextTime(replay.NextInputTime()) > *options_.pending_at);
    if (explain && options_.pending_at) {
      result.pending.clear();
      result.pending_time = t;
    }
    const core::CycleResult& cycle = loop.Cycle(t, core::CycleOptions{.explain = explain}, replay);
    ++result.cycles;
    result.evaluations += cycle.stats.evaluated;
    SLUICE_RETURN_IF_ERROR(replay.RequeueVictims(t, loop));
    if (options_.after_cycle) options_.after_cycle(state_, t, cycle);
  }
  if (options_.progress) options_.progress(1.0);
  result.gpus = replay.gpu_totals();
  return result;
}

}  // namespace sluice::sim
