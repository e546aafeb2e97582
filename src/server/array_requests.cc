#include "server/array_requests.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "base/array_ids.h"
#include "server/job_arrays.h"
#include "server/job_identity.h"
#include "server/job_spec.h"
#include "server/views.h"

namespace sluice::server {

using nlohmann::json;

namespace {

std::string_view Verb(ArrayAction action) {
  switch (action) {
    case ArrayAction::kCancel:
      return "cancel";
    case ArrayAction::kHold:
      return "hold";
    case ArrayAction::kRelease:
      return "release";
  }
  return "";
}

// Whether a position's state is one the action changes while it is not a Job.
bool Changes(ArrayAction action, core::ElementState state) {
  switch (action) {
    case ArrayAction::kCancel:
      return state == core::ElementState::kWaiting || state == core::ElementState::kHeld;
    case ArrayAction::kHold:
      return state == core::ElementState::kWaiting;
    case ArrayAction::kRelease:
      return state == core::ElementState::kHeld;
  }
  return false;
}

std::string RangeText(JobId id, int32_t first, int32_t last) {
  if (first == 0 && last == kMaxArrayIndex) return std::to_string(id);
  return std::to_string(id) + "[" + std::to_string(first) +
         (first == last ? "" : "-" + std::to_string(last)) + "]";
}

}  // namespace

// --- Submission (a JobRequests step, here with the rest of the arrays) --------------------------

Status JobRequests::IngestArray(json spec, std::shared_ptr<const std::string> fixed, Instant now,
                                store::WriteBatch& write, JobId id) {
  if (id > kMaxArrayJobId) {
    return Status(StatusCode::kResourceExhausted,
                  "array: job id " + std::to_string(id) + " is above the largest array id");
  }
  const std::string text = spec["array"].get<std::string>();
  SLUICE_RETURN_IF_ERROR(ctx_.ApplyLocked(core::JobSubmitted{ToCoreSpec(spec, id), text}, ""));
  const core::JobArray* array = ctx_.state().FindArray(id);
  auto info = std::make_shared<JobInfo>();
  info->fixed_text = std::move(fixed);
  info->in_core = true;  // as its array: JobForgotten drops the array once it ended
  info->queue = InternedText(ctx_.state().topology().queues()[array->queue].spec.name);
  info->row = JobRow{
      .id = id, .spec = SparseText(spec.dump()), .seq = array->base_seq, .submit_time = now};
  info->row.array_states = EncodeElementStates(array->states);
  info->SetState(ParseJobState(AggregateState(*array)).value_or(JobState::kPending));
  info->SetPhase(core::AdmissionPhase::kPending);
  info->AdoptSpec(spec);
  book_.Stage(*info, write);
  book_.Add(std::move(info));
  return Status::Ok();
}

// --- Actions ------------------------------------------------------------------------------------

bool ArrayRequests::Handles(JobId id) {
  if (IsArrayElement(id)) return true;
  const JobInfo* job = book_.Find(id);
  return job != nullptr && IsArrayParent(*job);
}

Result<json> ArrayRequests::Act(Lock& lock, const Caller& caller, JobId id, int32_t first,
                                int32_t last, ArrayAction action) {
  JobInfo* parent = book_.Find(id);
  if (parent == nullptr) return NotFound("no job " + std::to_string(id));
  if (!IsArrayParent(*parent)) {
    return InvalidArgument("index: job " + std::to_string(id) + " is not a job array");
  }
  const std::string owner = parent->user;
  SLUICE_RETURN_IF_ERROR(RefuseUnlessOwner(caller, owner, id));  // 1. (R-SRV-5)
  const core::JobArray* array = ctx_.state().FindArray(id);
  if (array == nullptr) {
    return FailedPrecondition("job array " + std::to_string(id) + " is already " +
                              parent->StateText());
  }
  auto lo = std::lower_bound(array->indices.begin(), array->indices.end(), first);
  if (lo == array->indices.end() || *lo > last) {
    return NotFound("job array " + std::to_string(id) + " has no element in [" +
                    std::to_string(first) + ", " + std::to_string(last) + "]");
  }
  store::WriteBatch batch;
  int64_t changed = ChangeWaitingRuns(id, first, last, action);          // 2.
  changed += ChangeElementJobs(caller, id, first, last, action, batch);  // 3.
  if (changed == 0) {
    return FailedPrecondition("job " + RangeText(id, first, last) + ": no element to " +
                              std::string(Verb(action)));
  }
  ctx_.log().info("job {}: {} element(s) {} by {}", RangeText(id, first, last), changed,
                 action == ArrayAction::kCancel ? "cancelled"
                 : action == ArrayAction::kHold ? "held"
                                                : "released",
                 caller.user);
  book_.StageArray(id, batch);  // 4.
  ctx_.cycle().MarkDirty();
  json answer = JobJson(*parent, book_, ctx_.state(), ctx_.Now(), false);
  answer["changed"] = changed;
  (void)ctx_.writes().WriteAndWait(lock, std::move(batch));  // a failure is resynced (context.h)
  return answer;
}

int64_t ArrayRequests::ChangeWaitingRuns(JobId id, int32_t first, int32_t last,
                                         ArrayAction action) {
  const core::JobArray* array = ctx_.state().FindArray(id);
  const auto& indices = array->indices;
  const auto lo = static_cast<size_t>(std::lower_bound(indices.begin(), indices.end(), first) -
                                      indices.begin());
  const auto hi =
      static_cast<size_t>(std::upper_bound(indices.begin(), indices.end(), last) - indices.begin());
  std::vector<std::pair<int32_t, int32_t>> runs;  // by index, from the states before any change
  int64_t count = 0;
  for (size_t pos = lo; pos < hi; ++pos) {
    if (!Changes(action, array->states[pos])) continue;
    ++count;
    if (!runs.empty() && pos > lo && Changes(action, array->states[pos - 1]) &&
        runs.back().second == indices[pos - 1]) {
      runs.back().second = indices[pos];
    } else {
      runs.emplace_back(indices[pos], indices[pos]);
    }
  }
  for (const auto& [from, to] : runs) {
    const core::Event event =
        action == ArrayAction::kCancel
            ? core::Event(core::ArrayElementsCancelled{.array = id, .first = from, .last = to})
            : core::Event(core::ArrayElementsHeld{
                  .array = id, .first = from, .last = to, .held = action == ArrayAction::kHold});
    (void)ctx_.ApplyLocked(event, "job " + RangeText(id, from, to));
  }
  return count;
}

int64_t ArrayRequests::ChangeElementJobs(const Caller& caller, JobId id, int32_t first,
                                         int32_t last, ArrayAction action,
                                         store::WriteBatch& batch) {
  int64_t changed = 0;
  const core::JobArray* array = ctx_.state().FindArray(id);
  const auto& indices = array->indices;
  const auto lo = static_cast<size_t>(std::lower_bound(indices.begin(), indices.end(), first) -
                                      indices.begin());
  const auto hi =
      static_cast<size_t>(std::upper_bound(indices.begin(), indices.end(), last) - indices.begin());
  for (size_t pos = lo; pos < hi; ++pos) {
    if (ctx_.state().FindArray(id)->states[pos] != core::ElementState::kQueued) continue;
    const JobId element = ArrayElementId(id, indices[pos]);
    const core::Job* cj = ctx_.state().FindJob(element);
    if (cj == nullptr || core::IsTerminal(cj->state)) continue;
    JobInfo* job = book_.Find(element);
    if (job == nullptr) continue;
    Status status = FailedPrecondition("unchanged");
    if (action == ArrayAction::kCancel) {
      status = requests_.CancelJob(caller, *job, batch);
    } else if ((action == ArrayAction::kHold) == (cj->state == JobState::kPending) &&
               IsWaiting(cj->state)) {
      status = requests_.HoldJob(caller, *job, action == ArrayAction::kHold, batch);
    }
    changed += status.ok() ? 1 : 0;
  }
  return changed;
}

Result<json> ArrayRequests::Get(JobId element) {
  if (JobInfo* job = book_.Find(element)) return JobJson(*job, book_, ctx_.state(), ctx_.Now(), true);
  const JobInfo* parent = book_.Find(ArrayIdOf(element));
  const std::optional<JobState> state = ctx_.state().ElementStateOf(element);
  if (parent == nullptr || !IsArrayParent(*parent) || !state) {
    return NotFound("no job " + FormatJobId(element));
  }
  // Not a Job yet (waiting behind the ones that could start), or ended and forgotten: the
  // array's object with the element's index and state.
  json j = JobJson(*parent, book_, ctx_.state(), ctx_.Now(), false);
  j.erase("array");
  j.erase("elements");
  j["index"] = ArrayIndexOf(element);
  j["state"] = std::string(ToString(*state));
  j["reason"] = IsWaiting(*state) ? json(parent->WaitReason()) : json(nullptr);
  j["start_time"] = nullptr;
  j["end_time"] = nullptr;
  return j;
}

}  // namespace sluice::server
