// ClusterState's job arrays (R-UX-3): submission, materialization of elements as Jobs, the
// `%N` cap, and cancel/hold/release of element ranges. Design: docs/design/arrays.md.
#include <algorithm>
#include <limits>
#include <utility>

#include "core/model/cluster_state.h"

namespace sluice::core {
namespace {

std::string Name(JobId id) { return "job " + std::to_string(id); }

// The positions [begin, end) in array.indices of the elements with an index in
// [first, last]; kNotFound naming the range when there is none.
Result<std::pair<size_t, size_t>> ElementRange(JobId id, const JobArray& array, int32_t first,
                                               int32_t last) {
  auto lo = std::lower_bound(array.indices.begin(), array.indices.end(), first);
  auto hi = std::upper_bound(array.indices.begin(), array.indices.end(), last);
  if (lo >= hi) {
    return NotFound(Name(id) + ": no element in [" + std::to_string(first) + ", " +
                    std::to_string(last) + "]");
  }
  return std::make_pair(static_cast<size_t>(lo - array.indices.begin()),
                        static_cast<size_t>(hi - array.indices.begin()));
}

ElementState EndedElementState(JobState state) {
  if (state == JobState::kDone) return ElementState::kDone;
  return state == JobState::kCancelled ? ElementState::kCancelled : ElementState::kExit;
}

}  // namespace

const JobArray* ClusterState::FindArray(JobId id) const {
  auto it = arrays_.find(id);
  return it == arrays_.end() ? nullptr : &it->second;
}

bool ClusterState::KnowsArrayPart(JobId id) const {
  if (arrays_.contains(id)) return true;
  return IsArrayElement(id) && ElementStateOf(id).has_value();
}

std::optional<JobState> ClusterState::ElementStateOf(JobId id) const {
  if (const Job* job = FindJob(id)) return job->state;
  const JobArray* array = FindArray(ArrayIdOf(id));
  if (!IsArrayElement(id) || array == nullptr) return std::nullopt;
  const int64_t pos = array->PositionOf(ArrayIndexOf(id));
  if (pos < 0) return std::nullopt;
  switch (array->states[pos]) {
    case ElementState::kWaiting:
    case ElementState::kQueued:  // restored as a Job soon, or forgotten after it ended
      return JobState::kPending;
    case ElementState::kHeld:
      return JobState::kHeld;
    case ElementState::kDone:
      return JobState::kDone;
    case ElementState::kExit:
      return JobState::kExit;
    case ElementState::kCancelled:
      return JobState::kCancelled;
  }
  return std::nullopt;
}

// Validates an array submission as Submit validates a job, and builds its record.
Result<JobArray> ClusterState::NewArray(const JobSpec& spec, const std::string& text) {
  if (spec.id < 1 || spec.id > kMaxArrayJobId) {
    return InvalidArgument(Name(spec.id) + ": an array id must be in [1, " +
                           std::to_string(kMaxArrayJobId) + "]");
  }
  if (jobs_.contains(spec.id) || arrays_.contains(spec.id) || dependencies_.HasEnded(spec.id)) {
    return Status(StatusCode::kAlreadyExists, Name(spec.id) + " exists");
  }
  Result<ArraySpec> parsed = ParseArraySpec(text);
  if (!parsed) return parsed.error().WithPrefix(Name(spec.id));
  if (spec.min_tasks < 1 || spec.max_tasks < spec.min_tasks) {
    return InvalidArgument(Name(spec.id) + ": tasks must satisfy 1 <= min <= max");
  }
  const std::optional<QueueIndex> queue = spec.queue.empty()
                                              ? std::optional<QueueIndex>(topology_.default_queue())
                                              : topology_.FindQueue(spec.queue);
  if (!queue) return NotFound(Name(spec.id) + ": no queue named '" + spec.queue + "'");
  const std::string& resreq_text =
      spec.resreq.empty() ? topology_.queues()[*queue].spec.default_resreq : spec.resreq;
  Result<const resreq::Request*> request = CompileRequest(resreq_text);
  if (!request) return request.error().WithPrefix(Name(spec.id) + ": resreq");
  if (!spec.depend.empty()) {
    Result<Dependency> dependency = Dependency::Parse(spec.depend);
    if (!dependency) return dependency.error().WithPrefix(Name(spec.id) + ": depend");
  }
  JobArray array;
  array.spec = spec;
  array.text = text;
  array.indices = std::move(parsed->indices);
  array.cap = parsed->cap;
  array.queue = *queue;
  array.min_slots = std::max(1, MinSlots(**request, spec));
  array.states.assign(array.indices.size(),
                      spec.hold ? ElementState::kHeld : ElementState::kWaiting);
  (spec.hold ? array.held : array.waiting) = array.size();
  return array;
}

Status ClusterState::SubmitArray(const JobSpec& spec, const std::string& text) {
  Result<JobArray> array = NewArray(spec, text);
  if (!array) return array.error();
  array->base_seq = next_seq_;
  next_seq_ += static_cast<uint64_t>(array->size());
  const JobId id = spec.id;
  JobArray& added = arrays_.emplace(id, std::move(*array)).first->second;
  open_arrays_.insert(id);
  UpdateArrayTarget(added);
  RefillArrays();
  return Status::Ok();
}

Status ClusterState::RestoreArray(JobSpec spec, const std::string& text, uint64_t base_seq,
                                  std::vector<ElementState> states) {
  Result<JobArray> array = NewArray(spec, text);
  if (!array) return array.error();
  if (states.size() != array->indices.size()) {
    return InvalidArgument(Name(spec.id) + ": " + std::to_string(states.size()) +
                           " element states for " + std::to_string(array->size()) + " elements");
  }
  array->waiting = array->held = 0;
  for (ElementState state : states) {
    array->waiting += state == ElementState::kWaiting;
    array->held += state == ElementState::kHeld;
    array->done += state == ElementState::kDone;
    array->exited += state == ElementState::kExit;
    array->cancelled += state == ElementState::kCancelled;
    array->started_any |= state == ElementState::kDone || state == ElementState::kExit;
  }
  array->states = std::move(states);
  array->base_seq = base_seq;
  next_seq_ = std::max(next_seq_, base_seq + static_cast<uint64_t>(array->size()));
  const JobId id = spec.id;
  JobArray& added = arrays_.emplace(id, std::move(*array)).first->second;
  open_arrays_.insert(id);
  UpdateArrayTarget(added);
  return Status::Ok();
}

// Steps: 1. leave the element's old category (tail state, pending set, held or active
// count); 2. join the new one; an ended element's state byte records how it ended;
// 3. tell dependencies on the whole array (UpdateArrayTarget).
void ClusterState::TrackElement(Job& job, std::optional<JobState> from) {
  auto it = arrays_.find(ArrayIdOf(job.spec.id));
  if (it == arrays_.end()) return;
  JobArray& array = it->second;
  const int64_t pos = array.PositionOf(ArrayIndexOf(job.spec.id));
  if (pos < 0) return;
  const auto position = static_cast<uint32_t>(pos);
  if (!from) {  // 1. a new Job: from the tail
    if (array.states[pos] == ElementState::kWaiting) --array.waiting;
    if (array.states[pos] == ElementState::kHeld) --array.held;
    array.states[pos] = ElementState::kQueued;
  } else if (*from == JobState::kPending) {
    array.pending.erase(position);
  } else if (*from == JobState::kHeld) {
    --array.queued_held;
  } else if (*from == JobState::kAdmitting || *from == JobState::kRunning) {
    --array.active;
  }
  job.array_limited = false;
  switch (job.state) {  // 2.
    case JobState::kPending:
      array.pending.insert(position);
      break;
    case JobState::kHeld:
      ++array.queued_held;
      break;
    case JobState::kAdmitting:
    case JobState::kRunning:
      ++array.active;
      array.started_any = true;
      break;
    default:
      array.states[pos] = EndedElementState(job.state);
      ++(job.state == JobState::kDone   ? array.done
         : job.state == JobState::kExit ? array.exited
                                        : array.cancelled);
      break;
  }
  array.flagged_room = -1;
  open_arrays_.insert(array.spec.id);
  UpdateArrayTarget(array);  // 3.
}

void ClusterState::UpdateArrayTarget(const JobArray& array) {
  DependTarget target{.state = JobState::kPending, .started = array.started_any};
  if (array.ended() == array.size()) {
    target.state = array.exited > 0      ? JobState::kExit
                   : array.cancelled > 0 ? JobState::kCancelled
                                         : JobState::kDone;
  } else if (array.active > 0) {
    target.state = JobState::kRunning;
  }
  dependencies_.SetArrayTarget(array.spec.id, target, jobs_);
}

void ClusterState::RefillArrays() {
  if (open_arrays_.empty()) return;
  for (auto it = open_arrays_.begin(); it != open_arrays_.end();) {
    JobArray& array = arrays_.at(*it);
    RefillArray(array);
    it = array.waiting == 0 && array.pending.empty() ? open_arrays_.erase(it) : std::next(it);
  }
}

// Steps: 1. room = cap - active (no cap: unbounded); fit = free slots / min_slots + 1, the
// most elements that could start now plus one that cannot (it stands for the rest);
// 2. want = room + 1 when the cap binds first (the extra one pends with ARRAY_LIMIT),
// else fit; 3. make Jobs of the next waiting elements, in index order, until `want`
// elements pend as Jobs; 4. flag the pending ones beyond `room` (FlagArrayLimited).
void ClusterState::RefillArray(JobArray& array) {
  constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max() / 2;
  const int64_t room = array.cap > 0 ? std::max<int64_t>(array.cap - array.active, 0) : kUnbounded;
  const int64_t fit = std::max<int64_t>(topology_.free_slots(), 0) / array.min_slots + 1;
  const int64_t want = room < fit ? room + 1 : fit;                                 // 2.
  while (static_cast<int64_t>(array.pending.size()) < want && array.waiting > 0) {  // 3.
    while (array.states[array.cursor] != ElementState::kWaiting) ++array.cursor;
    const size_t pos = array.cursor;
    JobSpec spec = array.spec;
    spec.id = ArrayElementId(array.spec.id, array.indices[pos]);
    spec.hold = false;
    const AdmissionRecord record{.enqueue_time = spec.submit_time,
                                 .spec_digest = SpecDigest(spec),
                                 .policy = topology_.queues()[array.queue].spec.policy};
    if (!Restore(std::move(spec), array.base_seq + pos, record).ok()) {
      // Its queue or resources were reconfigured away: the element cannot run.
      array.states[pos] = ElementState::kExit;
      --array.waiting;
      ++array.exited;
      UpdateArrayTarget(array);
    }
  }
  if (array.cap > 0) FlagArrayLimited(array, room);  // 4.
}

void ClusterState::FlagArrayLimited(JobArray& array, int64_t room) {
  if (array.flagged_room == room) return;
  array.flagged_room = room;
  int64_t rank = 0;
  for (uint32_t pos : array.pending) {
    Job* job = MutableJob(ArrayElementId(array.spec.id, array.indices[pos]));
    SLUICE_CHECK(job != nullptr);
    job->array_limited = rank++ >= room;
  }
}

Status ClusterState::CancelElements(JobId id, int32_t first, int32_t last, Instant now) {
  auto found = arrays_.find(id);
  if (found == arrays_.end()) return NotFound(Name(id) + " is not an array");
  JobArray& array = found->second;
  Result<std::pair<size_t, size_t>> range = ElementRange(id, array, first, last);
  if (!range) return range.error();
  int64_t changed = 0;
  for (size_t pos = range->first; pos < range->second; ++pos) {
    const JobId element = ArrayElementId(id, array.indices[pos]);
    const ElementState state = array.states[pos];
    if (state == ElementState::kQueued) {
      const Job* job = FindJob(element);
      if (job != nullptr && !IsTerminal(job->state) && Cancel(element, now).ok()) ++changed;
      continue;
    }
    if (state != ElementState::kWaiting && state != ElementState::kHeld) continue;
    --(state == ElementState::kWaiting ? array.waiting : array.held);
    array.states[pos] = ElementState::kCancelled;
    ++array.cancelled;
    ++changed;
    if (dependencies_.HasDependents(element)) {
      dependencies_.NoteEnded(element, DependTarget{.state = JobState::kCancelled}, jobs_);
    }
  }
  if (changed == 0) return FailedPrecondition(Name(id) + ": no element to cancel");
  array.flagged_room = -1;
  open_arrays_.insert(id);
  UpdateArrayTarget(array);
  return Status::Ok();
}

Status ClusterState::SetElementsHeld(JobId id, int32_t first, int32_t last, bool held) {
  auto found = arrays_.find(id);
  if (found == arrays_.end()) return NotFound(Name(id) + " is not an array");
  JobArray& array = found->second;
  Result<std::pair<size_t, size_t>> range = ElementRange(id, array, first, last);
  if (!range) return range.error();
  const ElementState from = held ? ElementState::kWaiting : ElementState::kHeld;
  int64_t changed = 0;
  for (size_t pos = range->first; pos < range->second; ++pos) {
    if (array.states[pos] == ElementState::kQueued) {
      const JobId element = ArrayElementId(id, array.indices[pos]);
      const Job* job = FindJob(element);
      const JobState want = held ? JobState::kPending : JobState::kHeld;
      if (job != nullptr && job->state == want && SetHeld(element, held).ok()) ++changed;
      continue;
    }
    if (array.states[pos] != from) continue;
    array.states[pos] = held ? ElementState::kHeld : ElementState::kWaiting;
    (held ? array.waiting : array.held) -= 1;
    (held ? array.held : array.waiting) += 1;
    if (!held) array.cursor = std::min(array.cursor, pos);
    ++changed;
  }
  if (changed == 0) {
    return FailedPrecondition(Name(id) + ": no element to " + (held ? "hold" : "release"));
  }
  array.flagged_room = -1;
  open_arrays_.insert(id);
  return Status::Ok();
}

void ClusterState::NoteEndedElements(const Dependency& dependency) {
  for (JobId named : dependency.jobs()) {
    if (!IsArrayElement(named) || jobs_.contains(named) || dependencies_.HasEnded(named)) continue;
    const std::optional<JobState> state = ElementStateOf(named);
    if (state && IsTerminal(*state)) {
      dependencies_.NoteEnded(named, DependTarget{.state = *state}, jobs_);
    }
  }
}

Status ClusterState::CancelArrayPart(JobId id, Instant now) {
  if (arrays_.contains(id)) return CancelElements(id, 0, kMaxArrayIndex, now);
  if (IsArrayElement(id) && arrays_.contains(ArrayIdOf(id))) {
    const int32_t index = ArrayIndexOf(id);
    return CancelElements(ArrayIdOf(id), index, index, now);
  }
  return NotFound(Name(id) + " does not exist");
}

Status ClusterState::HoldArrayPart(JobId id, bool held) {
  if (arrays_.contains(id)) return SetElementsHeld(id, 0, kMaxArrayIndex, held);
  if (IsArrayElement(id) && arrays_.contains(ArrayIdOf(id))) {
    const int32_t index = ArrayIndexOf(id);
    return SetElementsHeld(ArrayIdOf(id), index, index, held);
  }
  return NotFound(Name(id) + " does not exist");
}

Status ClusterState::WithdrawArray(JobId id) {
  JobArray& array = arrays_.at(id);
  if (array.active > 0 || array.ended() > 0) {
    return FailedPrecondition(Name(id) + ": only a new array is withdrawn");
  }
  for (size_t pos = 0; pos < array.indices.size(); ++pos) {
    if (array.states[pos] != ElementState::kQueued) continue;
    SLUICE_RETURN_IF_ERROR(Withdraw(ArrayElementId(id, array.indices[pos])));
  }
  dependencies_.Withdraw(id);
  open_arrays_.erase(id);
  arrays_.erase(id);
  return Status::Ok();
}

Status ClusterState::ForgetArray(JobId id) {
  const JobArray& array = arrays_.at(id);
  if (array.ended() != array.size()) {
    return FailedPrecondition(Name(id) + ": not every element has ended");
  }
  open_arrays_.erase(id);
  arrays_.erase(id);  // the dependency target stays: done(ID) keeps its verdict
  return Status::Ok();
}

}  // namespace sluice::core
