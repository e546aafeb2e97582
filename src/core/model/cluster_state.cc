#include "core/model/cluster_state.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace sluice::core {

Result<ClusterState> ClusterState::Create(const ClusterConfig& config) {
  ClusterState state;
  for (const HostSpec& spec : config.hosts) {
    SLUICE_RETURN_IF_ERROR(state.topology_.AddHost(spec));
  }
  if (config.queues.empty()) {
    return InvalidArgument("queues: at least one queue is required");
  }
  state.config_ = config;
  for (const QueueSpec& spec : config.queues) {
    SLUICE_RETURN_IF_ERROR(state.topology_.AddQueue(spec, config.host_groups));
  }
  state.topology_.SetSharedResources(config.shared_resources);
  if (!config.default_queue.empty()) {
    SLUICE_RETURN_IF_ERROR(state.topology_.SetDefaultQueue(config.default_queue));
  }
  state.ResetRequestHosts();
  state.ResetRequestSharedResources();
  state.usage_.ConfigureLimits(state.config_, state.topology_, state.running_);
  return state;
}

void ClusterState::ResetRequestHosts() {
  requests_.ResetHosts(topology_.host_resources(), topology_.hosts().size());
  reservations_.ResolveHosts(topology_);
}

void ClusterState::ResetRequestSharedResources() {
  requests_.ResetSharedResources(topology_.shared_resources());
}

Status ClusterState::AddHost(HostSpec spec) {
  SLUICE_RETURN_IF_ERROR(topology_.AddHost(std::move(spec)));
  ResetRequestHosts();
  // Host scopes name hosts.
  if (!config_.limits.empty()) usage_.ConfigureLimits(config_, topology_, running_);
  return Status::Ok();
}

Status ClusterState::SetHostState(std::string_view name, HostState state) {
  return topology_.SetHostState(name, state);
}

Status ClusterState::SetQueueStatus(std::string_view name, std::optional<bool> open,
                                    std::optional<bool> active) {
  Result<const QueueSpec*> spec = topology_.SetQueueStatus(name, open, active);
  if (!spec) return spec.error();
  for (QueueSpec& configured : config_.queues) {  // a later Reconfigure starts from here
    if (configured.name == (*spec)->name) configured = **spec;
  }
  return Status::Ok();
}

// The parts are copied one by one: the request catalog has no plain copy (its copies would
// share requests), and the jobs' pointers into it and into each other are re-linked.
ClusterState ClusterState::CloneParts(RequestCatalog::Relink& relink) const {
  ClusterState copy;
  copy.config_ = config_;
  copy.topology_ = topology_;
  copy.requests_ = requests_.Clone(relink);
  copy.dependencies_ = dependencies_;
  copy.running_by_end_ = running_by_end_;
  copy.usage_ = usage_;
  copy.reservations_ = reservations_;
  copy.preemptions_ = preemptions_;
  copy.next_seq_ = next_seq_;
  copy.next_start_seq_ = next_start_seq_;
  copy.arrays_ = arrays_;
  copy.open_arrays_ = open_arrays_;
  return copy;
}

Job& ClusterState::AdoptCopy(const Job& job, const RequestCatalog::Relink& relink) {
  Job& copy = jobs_.emplace(job.spec.id, job).first->second;
  if (auto it = relink.find(copy.request); it != relink.end()) copy.request = it->second;
  return copy;
}

ClusterState ClusterState::Clone() const {
  RequestCatalog::Relink relink;
  ClusterState copy = CloneParts(relink);
  copy.jobs_ = jobs_;
  for (auto& [id, job] : copy.jobs_) {
    if (auto it = relink.find(job.request); it != relink.end()) job.request = it->second;
  }
  for (QueueIndex q = 0; q < topology_.queues().size(); ++q) {
    PendingSet relinked;
    for (const PendingEntry& entry : topology_.queues()[q].pending) {
      relinked.insert(
          PendingEntry{entry.neg_priority, entry.seq, copy.MutableJob(entry.job->spec.id)});
    }
    copy.topology_.MutableQueue(q).pending = std::move(relinked);
  }
  for (const RunningEntry& entry : running_) {
    copy.running_.Append(RunningEntry{entry.start_seq, copy.MutableJob(entry.job->spec.id)});
  }
  copy.future_begins_ = future_begins_;
  copy.unclassified_ = unclassified_;
  return copy;
}

// Steps: 1. the first waiting jobs of each queue, in queue order; 2. the waiting jobs kept
// whatever their place (preemptions' beneficiaries, array elements), into their queues;
// 3. the running jobs; 4. the jobs that kept jobs' dependencies name, whatever their state
// (a waiting one outside every queue: no cycle considers it, so it stays as it is and the
// dependency reads it as it is, instead of as a job that does not exist: `never`); 5. the
// job-keyed indexes, filtered to the kept jobs.
ClusterState ClusterState::CloneFirstWaiting(size_t waiting_per_queue) const {
  RequestCatalog::Relink relink;
  ClusterState copy = CloneParts(relink);
  std::vector<const Job*> waiting_kept;
  for (QueueIndex q = 0; q < topology_.queues().size(); ++q) {
    PendingSet first;
    size_t n = 0;
    for (auto it = topology_.queues()[q].pending.begin();
         n < waiting_per_queue && it != topology_.queues()[q].pending.end(); ++it, ++n) {
      first.insert(PendingEntry{it->neg_priority, it->seq, &copy.AdoptCopy(*it->job, relink)});
      waiting_kept.push_back(it->job);
    }
    copy.topology_.MutableQueue(q).pending = std::move(first);
  }
  auto keep_waiting = [&](JobId id) {
    const Job* job = FindJob(id);
    if (job == nullptr || copy.jobs_.contains(id) ||
        (job->state != JobState::kPending && job->state != JobState::kHeld)) {
      return;
    }
    copy.topology_.MutableQueue(job->queue)
        .pending.insert(PendingEntry{-job->spec.priority, job->seq, &copy.AdoptCopy(*job, relink)});
    waiting_kept.push_back(job);
  };
  for (const auto& [for_job, preemption] : preemptions_) keep_waiting(for_job);
  for (JobId array_id : open_arrays_) {
    const JobArray& array = arrays_.at(array_id);
    for (uint32_t position : array.pending) {
      keep_waiting(ArrayElementId(array_id, array.indices[position]));
    }
  }
  for (const RunningEntry& entry : running_) {
    copy.running_.Append(RunningEntry{entry.start_seq, &copy.AdoptCopy(*entry.job, relink)});
  }
  for (const Job* job : waiting_kept) {
    const Dependency* dependency = dependencies_.ExpressionOf(job->spec.id);
    if (dependency == nullptr) continue;
    for (JobId named : dependency->jobs()) {
      const Job* target = FindJob(named);
      if (target != nullptr && !copy.jobs_.contains(named)) copy.AdoptCopy(*target, relink);
    }
  }
  // Only the jobs in the copy's queues: a cycle classifies and times these.
  std::unordered_set<JobId> queued;
  for (const Job* job : waiting_kept) queued.insert(job->spec.id);
  for (const auto& entry : future_begins_) {
    if (queued.contains(entry.second)) copy.future_begins_.insert(entry);
  }
  for (JobId id : unclassified_) {
    if (queued.contains(id)) copy.unclassified_.push_back(id);
  }
  return copy;
}

const Job* ClusterState::FindJob(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

Job* ClusterState::MutableJob(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

int32_t MinSlots(const resreq::Request& request, const JobSpec& spec) {
  int32_t best = -1;
  for (const resreq::Compound& alternative : request.alternatives) {
    int32_t slots = 0;
    for (const resreq::Primary& part : alternative.parts) {
      slots += part.count > 0 ? part.count : spec.min_tasks;
    }
    if (best < 0 || slots < best) best = slots;
  }
  return best;
}

Status ClusterState::Submit(JobSpec&& spec) {
  if (jobs_.contains(spec.id)) {
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(spec.id) + " exists");
  }
  if (dependencies_.HasEnded(spec.id)) {  // its dependents would follow the new job
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(spec.id) + " has ended");
  }
  if (spec.min_tasks < 1 || spec.max_tasks < spec.min_tasks) {
    return InvalidArgument("job " + std::to_string(spec.id) + ": tasks must satisfy 1 <= min (" +
                           std::to_string(spec.min_tasks) + ") <= max (" +
                           std::to_string(spec.max_tasks) + ")");
  }
  QueueIndex queue_index = topology_.default_queue();
  if (!spec.queue.empty()) {
    auto found = topology_.FindQueue(spec.queue);
    if (!found) {
      return NotFound("job " + std::to_string(spec.id) + ": no queue named '" + spec.queue + "'");
    }
    queue_index = *found;
  }
  const std::string& text =
      spec.resreq.empty() ? topology_.queues()[queue_index].spec.default_resreq : spec.resreq;
  Result<const resreq::Request*> request = CompileRequest(text);
  if (!request) {
    return request.error().WithPrefix("job " + std::to_string(spec.id) + ": resreq");
  }
  std::optional<Dependency> dependency;
  if (!spec.depend.empty()) {
    Result<Dependency> parsed = Dependency::Parse(spec.depend);
    if (!parsed) return parsed.error().WithPrefix("job " + std::to_string(spec.id) + ": depend");
    dependency = std::move(*parsed);
    if (!arrays_.empty()) NoteEndedElements(*dependency);
  }
  const JobId id = spec.id;
  Job& job = jobs_[id];
  job.spec = std::move(spec);
  job.request = *request;
  job.min_slots = MinSlots(**request, job.spec);
  job.queue = queue_index;
  job.seq = next_seq_++;
  job.admission.enqueue_time = job.spec.submit_time;
  job.admission.spec_digest = SpecDigest(job.spec);
  job.admission.policy = topology_.queues()[queue_index].spec.policy;
  job.state = job.spec.hold ? JobState::kHeld : JobState::kPending;
  topology_.MutableQueue(queue_index)
      .pending.insert(PendingEntry{-job.spec.priority, job.seq, &job});
  if (job.spec.begin_time > job.spec.submit_time) future_begins_.insert({job.spec.begin_time, id});
  unclassified_.push_back(id);
  if (dependency) dependencies_.Track(id, std::move(*dependency), jobs_);
  // A restored job may be named by jobs restored before it, which judged it missing.
  dependencies_.OnChanged(id, jobs_);
  return Status::Ok();
}

Status ClusterState::NoteEnded(JobId id, JobState state, bool started) {
  if (!IsTerminal(state)) {
    return InvalidArgument("job " + std::to_string(id) + ": " + std::string(ToString(state)) +
                           " is not an ended state");
  }
  if (jobs_.contains(id)) {
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(id) + " exists");
  }
  dependencies_.NoteEnded(id, DependTarget{.state = state, .started = started}, jobs_);
  return Status::Ok();
}

Status ClusterState::Withdraw(JobId id) {
  if (arrays_.contains(id)) return WithdrawArray(id);
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  if ((job->state != JobState::kPending && job->state != JobState::kHeld) || job->start_seq != 0) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(job->state)) + "; only a new job is withdrawn");
  }
  RemovePending(*job);
  dependencies_.Withdraw(id);
  jobs_.erase(id);
  return Status::Ok();
}

Status ClusterState::Forget(JobId id) {
  if (arrays_.contains(id)) return ForgetArray(id);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + std::to_string(id) + " does not exist");
  const Job& job = it->second;
  if (!IsTerminal(job.state)) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(job.state)) + ", not ended");
  }
  dependencies_.Forget(job);
  preemptions_.erase(id);
  jobs_.erase(it);
  return Status::Ok();
}

Status ClusterState::Restore(JobSpec spec, uint64_t seq, const AdmissionRecord& record) {
  const JobId id = spec.id;
  const std::optional<QueueIndex> queue = spec.queue.empty()
                                              ? std::optional<QueueIndex>(topology_.default_queue())
                                              : topology_.FindQueue(spec.queue);
  if (queue &&
      topology_.queues()[*queue].pending.contains(PendingEntry{-spec.priority, seq, nullptr})) {
    return Status(StatusCode::kAlreadyExists,
                  "job " + std::to_string(id) + ": sequence " + std::to_string(seq) + " is taken");
  }
  const uint64_t next_seq = next_seq_;
  SLUICE_RETURN_IF_ERROR(Submit(std::move(spec)));
  Job& job = *MutableJob(id);
  PendingSet& pending = topology_.MutableQueue(job.queue).pending;
  pending.erase(PendingEntry{-job.spec.priority, job.seq, &job});
  pending.insert(PendingEntry{-job.spec.priority, seq, &job});
  job.seq = seq;
  job.admission = record;
  job.admission.phase = AdmissionPhase::kPending;
  next_seq_ = std::max(next_seq, seq + 1);
  NoteElement(job, std::nullopt);
  return Status::Ok();
}

Status ClusterState::Requeue(JobId id) {
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  if (job->state != JobState::kRunning && job->state != JobState::kAdmitting) {
    return FailedPrecondition("job " + std::to_string(id) + " is not running but " +
                              std::string(ToString(job->state)));
  }
  const JobState was = job->state;
  const bool host_gone = Release(*job);
  job->allocation = Allocation{};
  job->preempted_for = kNoJob;
  job->state = JobState::kPending;
  job->admission.phase = AdmissionPhase::kPending;
  topology_.MutableQueue(job->queue)
      .pending.insert(PendingEntry{-job->spec.priority, job->seq, job});
  if (job->spec.begin_time > job->spec.submit_time) {
    future_begins_.insert({job->spec.begin_time, id});
  }
  NoteElement(*job, was);
  if (host_gone) HostGone();  // the job is pending again: classified with the others
  return Status::Ok();
}

Status ClusterState::SetHeld(JobId id, bool held) {
  Job* job = MutableJob(id);
  if (job == nullptr && !arrays_.empty()) return HoldArrayPart(id, held);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  const JobState from = held ? JobState::kPending : JobState::kHeld;
  if (job->state != from) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(job->state)) + ", not " +
                              std::string(ToString(from)));
  }
  job->state = held ? JobState::kHeld : JobState::kPending;
  NoteElement(*job, from);
  return Status::Ok();
}

void ClusterState::RemovePending(Job& job) {
  size_t erased = topology_.MutableQueue(job.queue).pending.erase(
      PendingEntry{-job.spec.priority, job.seq, &job});
  SLUICE_CHECK(erased == 1);
  future_begins_.erase({job.spec.begin_time, job.spec.id});
}

bool ClusterState::Release(Job& job) {
  const bool host_gone = topology_.Vacate(job.queue, job.allocation);
  usage_.Stopped(job, topology_);
  running_.Erase(job.start_seq);
  running_by_end_.erase(RunningByEnd{.end = job.EstimatedEnd(), .start_seq = job.start_seq});
  job.allocation.hosts.clear();
  return host_gone;
}

void ClusterState::HostGone() {
  ResetRequestHosts();
  ReclassifyPending();
}

Status ClusterState::Cancel(JobId id, Instant now) {
  Job* job = MutableJob(id);
  if (job == nullptr && !arrays_.empty()) return CancelArrayPart(id, now);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  const JobState was = job->state;
  switch (job->state) {
    case JobState::kPending:
    case JobState::kHeld:
      RemovePending(*job);
      break;
    case JobState::kAdmitting:
    case JobState::kRunning:
      usage_.ChargeFairshare(*job, topology_.queues()[job->queue].spec, now);
      if (Release(*job)) HostGone();
      break;
    default:
      return FailedPrecondition("job " + std::to_string(id) + " is already " +
                                std::string(ToString(job->state)));
  }
  job->state = JobState::kCancelled;
  job->admission.phase = AdmissionPhase::kEnded;
  job->end_time = now;
  dependencies_.OnChanged(id, jobs_);
  NoteElement(*job, was);
  return Status::Ok();
}

Status ClusterState::Finish(JobId id, Instant now, int32_t exit_code, ExitCause cause,
                            bool lost_run) {
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  const JobState was = job->state;
  if (lost_run && (was == JobState::kPending || was == JobState::kHeld)) {
    // Its slots went back at the requeue, its usage with them.
    RemovePending(*job);
  } else if (!lost_run && (was == JobState::kRunning || was == JobState::kAdmitting)) {
    usage_.ChargeFairshare(*job, topology_.queues()[job->queue].spec, now);
    usage_.RecordRuntime(*job, now);
    if (Release(*job)) HostGone();
  } else {
    return FailedPrecondition("job " + std::to_string(id) + " is not running but " +
                              std::string(ToString(job->state)));
  }
  if (cause == ExitCause::kNone && exit_code != 0) cause = ExitCause::kNonZeroExit;
  job->state = cause == ExitCause::kNone ? JobState::kDone : JobState::kExit;
  job->admission.phase = AdmissionPhase::kEnded;
  job->exit_cause = cause;
  job->exit_code = exit_code;
  job->end_time = now;
  dependencies_.OnChanged(id, jobs_);
  NoteElement(*job, was);
  return Status::Ok();
}

const Job& ClusterState::Start(JobId id, Allocation allocation, Instant now) {
  Job* job = MutableJob(id);
  SLUICE_CHECK(job != nullptr && job->state == JobState::kPending);
  RemovePending(*job);
  topology_.Occupy(job->queue, allocation);
  preemptions_.erase(id);  // what was freed for it is its own now
  job->allocation = std::move(allocation);
  usage_.Started(*job, topology_);
  job->state = JobState::kRunning;
  job->admission.phase = AdmissionPhase::kAdmitted;
  job->start_time = now;
  job->start_seq = next_start_seq_++;
  running_.Append(RunningEntry{job->start_seq, job});
  running_by_end_.insert(RunningByEnd{.end = job->EstimatedEnd(),
                                      .start_seq = job->start_seq,
                                      .slots = job->allocation.TotalSlots()});
  dependencies_.OnChanged(id, jobs_);
  NoteElement(*job, JobState::kPending);
  return *job;
}

void ClusterState::Fail(JobId id, ExitCause cause, Instant now) {
  Job* job = MutableJob(id);
  SLUICE_CHECK(job != nullptr &&
               (job->state == JobState::kPending || job->state == JobState::kHeld));
  const JobState was = job->state;
  RemovePending(*job);
  job->state = JobState::kExit;
  job->admission.phase = AdmissionPhase::kEnded;
  job->exit_cause = cause;
  job->end_time = now;
  dependencies_.OnChanged(id, jobs_);
  NoteElement(*job, was);
}

// Steps: 1. validate the whole configuration and plan its application
// (Topology::PlanReconfigure), the only step that may fail; 2. apply it to the topology
// (Topology::ApplyReconfigure); 3. tell the request catalog of the new hosts and resources
// (ResetRequestHosts, ResetRequestSharedResources, ResetQueues); 4. take the new
// configuration and its limits (UsageLedger::ConfigureLimits); 5. classify every pending job
// again (ReclassifyPending).
Status ClusterState::Reconfigure(const ClusterConfig& config) {
  Result<Topology::ReconfigurePlan> plan = topology_.PlanReconfigure(config);
  if (!plan) return plan.error();
  // No error is possible from here on.
  topology_.ApplyReconfigure(config, std::move(*plan));
  ResetRequestHosts();
  ResetRequestSharedResources();
  requests_.ResetQueues();
  config_ = config;
  usage_.ConfigureLimits(config_, topology_, running_);
  ReclassifyPending();
  return Status::Ok();
}

void ClusterState::ReclassifyPending() {
  unclassified_.clear();
  for (const Queue& queue : topology_.queues()) {
    for (const PendingEntry& entry : queue.pending) {
      entry.job->classified = false;
      unclassified_.push_back(entry.job->spec.id);
    }
  }
}

void ClusterState::MarkPreempted(JobId victim, JobId for_job) {
  Job* job = MutableJob(victim);
  SLUICE_CHECK(job != nullptr &&
               (job->state == JobState::kRunning || job->state == JobState::kAdmitting));
  job->preempted_for = for_job;
  Preemption& preemption = preemptions_[for_job];
  preemption.victims.push_back(victim);
  for (const HostGrant& grant : job->allocation.hosts) {
    auto at = std::lower_bound(preemption.hosts.begin(), preemption.hosts.end(), grant.host);
    if (at == preemption.hosts.end() || *at != grant.host) preemption.hosts.insert(at, grant.host);
  }
}

void ClusterState::AddTotals(QueueIndex queue, const AdmissionTotals& delta) {
  AdmissionTotals& t = topology_.MutableQueue(queue).totals;
  t.admitted += delta.admitted;
  t.backfilled += delta.backfilled;
  t.temporarily_unavailable += delta.temporarily_unavailable;
  t.unschedulable += delta.unschedulable;
  t.preempted += delta.preempted;
}

void ClusterState::UpdateAdmission(JobId id, int32_t bypass_count,
                                   std::optional<Instant> first_blocked,
                                   std::optional<Instant> gate_since) {
  Job* job = MutableJob(id);
  SLUICE_CHECK(job != nullptr);
  job->admission.bypass_count = bypass_count;
  job->admission.first_blocked = first_blocked;
  job->admission.gate_since = gate_since;
}

void ClusterState::MarkClassified() {
  for (JobId id : unclassified_) {
    Job* job = MutableJob(id);
    if (job != nullptr) job->classified = true;
  }
  unclassified_.clear();
}

}  // namespace sluice::core
