// ClusterState's changes of a job in place (R-UX-7, issue 17): Candidate, Modify,
// SetRunLimit and Revive (cluster_state.h, events.h's JobModified, RunLimitChanged and
// JobRevived). Each validates first and changes nothing when it refuses.
#include <utility>

#include "core/model/cluster_state.h"

namespace sluice::core {

namespace {

// Arrays (R-UX-3) are changed as a whole by cancel/hold/release only: an element's spec is
// its array's, and a whole array has no one spec to replace (R-UX-7 covers plain jobs).
Status RefuseArrayChange(JobId id, bool is_array, const char* verb) {
  if (IsArrayElement(id)) {
    return FailedPrecondition("job " + FormatJobId(id) + " is an element of array " +
                              std::to_string(ArrayIdOf(id)) + "; array elements cannot be " + verb +
                              " (cancel it and submit a job instead)");
  }
  if (is_array) {
    return FailedPrecondition("job " + std::to_string(id) + " is a job array; arrays cannot be " +
                              verb + " (cancel, hold or release it instead)");
  }
  return Status::Ok();
}

}  // namespace

Result<Job> ClusterState::Candidate(const JobSpec& spec) {
  const std::string job = "job " + std::to_string(spec.id);
  if (spec.min_tasks < 1 || spec.max_tasks < spec.min_tasks) {
    return InvalidArgument(job + ": tasks must satisfy 1 <= min (" +
                           std::to_string(spec.min_tasks) + ") <= max (" +
                           std::to_string(spec.max_tasks) + ")");
  }
  QueueIndex queue = topology_.default_queue();
  if (!spec.queue.empty()) {
    std::optional<QueueIndex> found = topology_.FindQueue(spec.queue);
    if (!found) return NotFound(job + ": no queue named '" + spec.queue + "'");
    queue = *found;
  }
  const std::string& text =
      spec.resreq.empty() ? topology_.queues()[queue].spec.default_resreq : spec.resreq;
  Result<const resreq::Request*> request = CompileRequest(text);
  if (!request) return request.error().WithPrefix(job + ": resreq");
  if (!spec.depend.empty()) {
    Result<Dependency> parsed = Dependency::Parse(spec.depend);
    if (!parsed) return parsed.error().WithPrefix(job + ": depend");
  }
  Job candidate;
  candidate.spec = spec;
  candidate.queue = queue;
  candidate.request = *request;
  candidate.min_slots = MinSlots(**request, spec);
  return candidate;
}

// Steps: 1. the candidate (validation: nothing changes on an error); 2. out of its queue and
// its dependency untracked; 3. the new spec, request and queue — a new queue means the end
// of that queue (a fresh sequence and record); 4. back into the queue, classified again.
Status ClusterState::Modify(JobSpec spec, Instant now) {
  const JobId id = spec.id;
  SLUICE_RETURN_IF_ERROR(RefuseArrayChange(id, arrays_.contains(id), "modified"));
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  if (job->state != JobState::kPending && job->state != JobState::kHeld) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(job->state)) +
                              "; only PENDING and HELD jobs "
                              "can be modified");
  }
  Result<Job> candidate = Candidate(spec);
  if (!candidate) return candidate.error();
  RemovePending(*job);
  dependencies_.Untrack(id);
  const bool moves = candidate->queue != job->queue;
  spec.hold = job->state == JobState::kHeld;
  spec.submit_time = job->spec.submit_time;
  job->spec = std::move(spec);
  job->request = candidate->request;
  job->min_slots = candidate->min_slots;
  job->admission.spec_digest = SpecDigest(job->spec);
  if (moves) {
    job->queue = candidate->queue;
    job->seq = next_seq_++;
    job->admission = AdmissionRecord{.enqueue_time = now,
                                     .spec_digest = SpecDigest(job->spec),
                                     .policy = topology_.queues()[job->queue].spec.policy,
                                     .epoch = job->admission.epoch};
  }
  topology_.MutableQueue(job->queue)
      .pending.insert(PendingEntry{-job->spec.priority, job->seq, job});
  if (job->spec.begin_time > job->spec.submit_time) {
    future_begins_.insert({job->spec.begin_time, id});
  }
  job->classified = false;
  unclassified_.push_back(id);
  if (!job->spec.depend.empty()) {
    Result<Dependency> dependency = Dependency::Parse(job->spec.depend);
    SLUICE_CHECK(dependency.has_value());  // the candidate parsed it
    dependencies_.Track(id, std::move(*dependency), jobs_);
  }
  return Status::Ok();
}

Status ClusterState::SetRunLimit(JobId id, std::optional<Duration> run_limit) {
  SLUICE_RETURN_IF_ERROR(RefuseArrayChange(id, arrays_.contains(id), "modified"));
  Job* job = MutableJob(id);
  if (job == nullptr) return NotFound("job " + std::to_string(id) + " does not exist");
  if (job->state != JobState::kRunning && job->state != JobState::kAdmitting) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(job->state)) + ", not running");
  }
  running_by_end_.erase(RunningByEnd{.end = job->EstimatedEnd(), .start_seq = job->start_seq});
  job->spec.run_limit = run_limit;
  running_by_end_.insert(RunningByEnd{.end = job->EstimatedEnd(),
                                      .start_seq = job->start_seq,
                                      .slots = job->allocation.TotalSlots()});
  return Status::Ok();
}

Status ClusterState::Revive(JobSpec spec, uint64_t seq, Instant now) {
  const JobId id = spec.id;
  SLUICE_RETURN_IF_ERROR(RefuseArrayChange(id, arrays_.contains(id), "requeued"));
  auto it = jobs_.find(id);
  if (it == jobs_.end() && !dependencies_.HasEnded(id)) {
    return NotFound("job " + std::to_string(id) + " does not exist");
  }
  if (it != jobs_.end() && !IsTerminal(it->second.state)) {
    return FailedPrecondition("job " + std::to_string(id) + " is " +
                              std::string(ToString(it->second.state)) + ", not ended");
  }
  Result<Job> candidate = Candidate(spec);
  if (!candidate) return candidate.error();
  if (it != jobs_.end()) {
    preemptions_.erase(id);
    jobs_.erase(it);
  }
  dependencies_.Untrack(id);
  spec.hold = false;
  return Restore(std::move(spec), seq,
                 AdmissionRecord{.enqueue_time = now,
                                 .policy = topology_.queues()[candidate->queue].spec.policy});
}

}  // namespace sluice::core
