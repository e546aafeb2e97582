#include "server/job_arrays.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "server/job_book.h"
#include "server/job_spec.h"
#include "server/text_parsers.h"

namespace sluice::server {

using nlohmann::json;

namespace {

constexpr char kStateLetters[] = {'W', 'H', 'Q', 'D', 'E', 'C'};  // by core::ElementState

std::optional<core::ElementState> StateOfLetter(char c) {
  for (size_t i = 0; i < std::size(kStateLetters); ++i) {
    if (kStateLetters[i] == c) return static_cast<core::ElementState>(i);
  }
  return std::nullopt;
}

}  // namespace

core::ElementState StoredElementState(const store::StoredJob& row) {
  if (row.phase != core::ToString(core::AdmissionPhase::kEnded)) return core::ElementState::kQueued;
  if (row.state == ToString(JobState::kDone)) return core::ElementState::kDone;
  if (row.state == ToString(JobState::kCancelled)) return core::ElementState::kCancelled;
  return core::ElementState::kExit;
}

bool IsArrayParent(const JobInfo& job) {
  return !IsArrayElement(job.row.id) && job.has_array;
}

Status ParseArrayField(const json& body, const std::string& where, json& spec) {
  if (!body.contains("array")) return Status::Ok();
  const json& array = body["array"];
  if (!array.is_string()) {
    return InvalidArgument(where + ".array: expected a string such as \"1-100%10\", got " +
                           array.dump());
  }
  Result<core::ArraySpec> parsed = core::ParseArraySpec(array.get_ref<const std::string&>());
  if (!parsed) return InvalidArgument(where + "." + parsed.error().message());
  const auto size = static_cast<int64_t>(parsed->indices.size());
  if (size > kMaxServerArrayElements) {
    return InvalidArgument(where + ".array: " + std::to_string(size) +
                           " elements exceed the limit of " +
                           std::to_string(kMaxServerArrayElements) + " per array");
  }
  spec["array"] = array;
  return Status::Ok();
}

std::string EncodeElementStates(const std::vector<core::ElementState>& states) {
  std::string out;
  for (size_t i = 0; i < states.size();) {
    size_t j = i;
    while (j < states.size() && states[j] == states[i]) ++j;
    out += std::to_string(j - i);
    out += kStateLetters[static_cast<size_t>(states[i])];
    i = j;
  }
  return out;
}

Result<std::vector<core::ElementState>> DecodeElementStates(std::string_view text, size_t size) {
  std::vector<core::ElementState> states;
  states.reserve(size);
  size_t at = 0;
  while (at < text.size()) {
    size_t letter = at;
    while (letter < text.size() && text[letter] >= '0' && text[letter] <= '9') ++letter;
    const std::optional<int64_t> count = ParseInteger(text.substr(at, letter - at));
    const std::optional<core::ElementState> state =
        letter < text.size() ? StateOfLetter(text[letter]) : std::nullopt;
    if (!count || !state || *count < 1 || states.size() + *count > size) {
      return InvalidArgument("array_states: malformed at offset " + std::to_string(at));
    }
    states.insert(states.end(), static_cast<size_t>(*count), *state);
    at = letter + 1;
  }
  if (states.size() != size) {
    return InvalidArgument("array_states: " + std::to_string(states.size()) + " states for " +
                           std::to_string(size) + " elements");
  }
  return states;
}

Result<std::pair<int32_t, int32_t>> ParseIndexRange(std::string_view text) {
  const size_t dash = text.find('-');
  const std::optional<int64_t> first = ParseInteger(text.substr(0, dash));
  const std::optional<int64_t> last =
      dash == std::string_view::npos ? first : ParseInteger(text.substr(dash + 1));
  if (!first || !last || *first < 0 || *last < *first || *last > kMaxArrayIndex) {
    return InvalidArgument("index: expected INDEX or FIRST-LAST (0 <= FIRST <= LAST <= " +
                           std::to_string(kMaxArrayIndex) + "), got '" + std::string(text) + "'");
  }
  return std::make_pair(static_cast<int32_t>(*first), static_cast<int32_t>(*last));
}

std::vector<std::pair<std::string, int64_t>> ElementCounts(const core::JobArray* array,
                                                           std::string_view stored) {
  int64_t pending = 0, held = 0, running = 0, done = 0, exited = 0, cancelled = 0;
  if (array != nullptr) {
    pending = array->waiting + static_cast<int64_t>(array->pending.size());
    held = array->held + array->queued_held;
    running = array->active;
    done = array->done;
    exited = array->exited;
    cancelled = array->cancelled;
  } else {
    // The core forgot the array (it ended): its stored states are all ended ones.
    size_t at = 0;
    while (at < stored.size()) {
      size_t letter = at;
      while (letter < stored.size() && stored[letter] >= '0' && stored[letter] <= '9') ++letter;
      const int64_t count = ParseInteger(stored.substr(at, letter - at)).value_or(0);
      const char c = letter < stored.size() ? stored[letter] : '?';
      (c == 'D'   ? done
       : c == 'E' ? exited
       : c == 'C' ? cancelled
       : c == 'H' ? held
                  : pending) += count;
      at = letter + 1;
    }
  }
  return {{"PENDING", pending}, {"HELD", held},   {"RUNNING", running},
          {"DONE", done},       {"EXIT", exited}, {"CANCELLED", cancelled}};
}

std::string AggregateState(const core::JobArray& array) {
  if (array.ended() == array.size()) {
    return std::string(ToString(array.exited > 0      ? JobState::kExit
                                : array.cancelled > 0 ? JobState::kCancelled
                                                      : JobState::kDone));
  }
  if (array.active > 0) return std::string(ToString(JobState::kRunning));
  if (array.waiting == 0 && array.pending.empty()) return std::string(ToString(JobState::kHeld));
  return std::string(ToString(JobState::kPending));
}

// --- JobBook's arrays ---------------------------------------------------------------------------

void JobBook::CountUnrecordedElements(JobCounts& counts) const {
  const core::ClusterState& cs = ctx_.state();
  for (const auto& [id, array] : cs.arrays()) {
    int64_t pending = 0;
    int64_t held = 0;
    for (size_t position = 0; position < array.states.size(); ++position) {
      const core::ElementState state = array.states[position];
      if (state == core::ElementState::kDone || state == core::ElementState::kExit ||
          state == core::ElementState::kCancelled) {
        continue;  // an ended element is counted by its record while it has one
      }
      const JobId element = ArrayElementId(id, array.indices[position]);
      if (jobs_.contains(element)) continue;  // counted by its record
      const core::Job* cj = state == core::ElementState::kQueued ? cs.FindJob(element) : nullptr;
      const bool is_held = state == core::ElementState::kHeld ||
                           (cj != nullptr && cj->state == core::JobState::kHeld);
      (is_held ? held : pending) += 1;
    }
    const std::string& queue = cs.topology().queues()[array.queue].spec.name;
    std::string reason = std::string(core::ToString(core::ReasonCode::kNewJob));
    if (auto parent = jobs_.find(id); parent != jobs_.end() && IsWaiting(parent->second->state()) &&
                                      !parent->second->main_reason.empty()) {
      reason = parent->second->main_reason;
    }
    const std::string& user = array.spec.user;  // a structured binding: not captured (clang)
    const auto add = [&](JobState state, const std::string& why, int64_t n) {
      if (n == 0) return;
      counts.by_state[{std::string(ToString(state)), queue}] += n;
      counts.by_reason[{why, queue}] += n;
      counts.by_user[{user, std::string(ToString(state))}] += n;
    };
    add(JobState::kPending, reason, pending);
    add(JobState::kHeld, std::string(core::ToString(core::ReasonCode::kHeld)), held);
  }
}

std::optional<std::string> JobBook::ListedArrayState(JobId id) const {
  const core::JobArray* array = ctx_.state().FindArray(id);
  if (array == nullptr) return std::nullopt;
  bool waiting = array->waiting > 0;
  for (auto it = array->pending.begin(); !waiting && it != array->pending.end(); ++it) {
    waiting = !jobs_.contains(ArrayElementId(id, array->indices[*it]));  // not looked up yet
  }
  if (waiting) return std::string(ToString(JobState::kPending));
  if (array->held > 0 || array->queued_held > 0) return std::string(ToString(JobState::kHeld));
  return std::nullopt;
}

JobInfo* JobBook::AddElement(JobId id) {
  const core::Job* cj = ctx_.state().FindJob(id);
  auto parent_it = jobs_.find(ArrayIdOf(id));
  if (cj == nullptr || parent_it == jobs_.end()) return nullptr;
  const JobInfo& parent = *parent_it->second;
  auto info = std::make_shared<JobInfo>();
  info->user = parent.user;
  info->account = parent.account;
  info->reservation = parent.reservation;
  info->run_limit = parent.run_limit;
  info->max_tasks = parent.max_tasks;
  info->has_array = parent.has_array;
  info->fixed_text = parent.fixed_text;
  info->queue = parent.queue;
  info->in_core = true;
  // The parent keeps its spec (SpecsStored): each element's row stores a copy of it.
  info->row = JobRow{.id = id, .spec = parent.row.spec, .submit_time = parent.row.submit_time};
  info->SetState(cj->state == JobState::kHeld ? JobState::kHeld : JobState::kPending);
  info->SetPhase(core::AdmissionPhase::kPending);
  SyncRow(*info);
  return Put(std::move(info));
}

void JobBook::StageArray(JobId id, store::WriteBatch& batch) {
  auto it = jobs_.find(id);
  const core::JobArray* array = ctx_.state().FindArray(id);
  if (it == jobs_.end() || array == nullptr) return;
  JobInfo& parent = *it->second;
  parent.row.array_states = EncodeElementStates(array->states);
  const std::optional<JobState> state = ParseJobState(AggregateState(*array));
  if (state && *state != parent.state()) {
    if (!IsWaiting(*state) && parent.row.start_time == 0 && array->started_any) {
      parent.row.start_time = ctx_.Now();
    }
    if (*state == JobState::kDone || *state == JobState::kExit || *state == JobState::kCancelled) {
      parent.SetPhase(core::AdmissionPhase::kEnded);
      parent.row.end_time = ctx_.Now();
    }
    SetState(parent, *state, "(its elements)", batch);
    return;
  }
  // Many elements change in one cycle: the parent's row is written once per batch.
  const size_t look = std::min<size_t>(batch.jobs.size(), 64);
  for (size_t i = batch.jobs.size(); i > batch.jobs.size() - look; --i) {
    if (batch.jobs[i - 1].id == id) {
      batch.jobs[i - 1] = parent.Stored();
      return;
    }
  }
  batch.jobs.push_back(parent.Stored());
}

// Steps: 1. its elements' states from its row (a queued one without an unfinished row was a
// pending job never stored: it waits); 2. each element row's state over its position's;
// 3. ArrayRestored.
Status JobBook::RestoreArrayRow(JobInfo& job, const json& spec) {
  const JobId id = job.row.id;
  const std::string what = "job " + std::to_string(id);
  if (!spec.is_object() || !spec.contains("array") || !spec["array"].is_string()) {
    return InvalidArgument(what + ": unreadable array");
  }
  Result<core::ArraySpec> parsed = core::ParseArraySpec(spec["array"].get<std::string>());
  if (!parsed) return InvalidArgument(what + ": unreadable array");
  const std::vector<int32_t>& indices = parsed->indices;
  Result<std::vector<core::ElementState>> decoded =
      DecodeElementStates(job.row.array_states.str(), indices.size());
  std::vector<core::ElementState> states(indices.size(), core::ElementState::kWaiting);
  if (decoded) {
    states = std::move(*decoded);
  } else {
    ctx_.log().error("job {}: {}; its elements wait again", id, decoded.error().message());
  }
  for (core::ElementState& s : states) {
    if (s == core::ElementState::kQueued) s = core::ElementState::kWaiting;
  }
  if (auto rows = element_states_.find(id); rows != element_states_.end()) {
    for (const auto& [index, state] : rows->second) {
      auto pos = std::lower_bound(indices.begin(), indices.end(), index);
      if (pos != indices.end() && *pos == index)
        states[static_cast<size_t>(pos - indices.begin())] = state;
    }
  }
  core::ArrayRestored event{.spec = ToCoreSpec(spec, id),
                            .array = spec["array"].get<std::string>(),
                            .base_seq = job.row.seq,
                            .states = std::move(states)};
  SLUICE_RETURN_IF_ERROR(ctx_.ApplyLocked(event, what + ": cannot restore the array"));
  job.in_core = true;
  return Status::Ok();
}

}  // namespace sluice::server
