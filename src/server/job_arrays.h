// Job arrays in the controller (R-UX-3; the core's side is docs/design/arrays.md).
//
// Representation: an array is one JobInfo, its "parent", whose row holds the submission
// (spec with `"array": "1-50%5"`), the aggregate state of its elements and, in
// `array_states`, every element's state by position run-length encoded ("12D3Q35W");
// the core keeps the JobArray. An element `ID[INDEX]` (packed JobId, base/array_ids.h) gets
// a JobInfo of its own only once the core made it a Job (JobBook::Find creates it on first
// use, JobBook::AddElement), so a pending element that the core has not materialized costs
// the controller nothing. Element rows are stored once they changed state (start, hold,
// end); whenever one is staged the parent is staged with it (JobBook::StageArray), so the
// stored states always agree with the element rows of the same batch.
// Restart (job_restore.cc): the parent's states, with each stored unfinished element
// `queued` and a `queued` position without a row `waiting` again (a pending element Job
// that was never stored), go back as ArrayRestored; element rows then follow as jobs.
// Thread-safety: the functions here are pure; JobBook's array methods REQUIRE the mutex.
// Implements R-UX-3 (server side).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/array_ids.h"
#include "base/status.h"
#include "core/model/cluster_state.h"
#include "core/model/job_array.h"
#include "store/store.h"

namespace sluice::server {

struct JobInfo;

// The most elements one submitted array may have (LSF's MAX_JOB_ARRAY_SIZE, Slurm's
// MaxArraySize; the core's own bound is core::kMaxArrayElements).
inline constexpr int64_t kMaxServerArrayElements = 1'000'000;
// The most jobs and array elements one batch request may add together (issue 48: a batch of
// 1,000 arrays of a million elements each took the server from 69 MB to 10 GB).
inline constexpr int64_t kMaxElementsPerRequest = 1'000'000;

// A job array's submission: the parent row (its spec has "array"), never an element.
bool IsArrayParent(const JobInfo& job);

// The `array` member of a submission (`where` names it, e.g. "job"): a string the core's
// ParseArraySpec accepts with at most kMaxServerArrayElements elements, copied into `spec`.
// Errors: kInvalidArgument "job.array: ..." (a malformed spec or too many elements).
Status ParseArrayField(const nlohmann::json& body, const std::string& where, nlohmann::json& spec);

// Element states by position <-> "12D3Q35W" (letters W H Q D E C: waiting, held, queued,
// done, exit, cancelled). Decode errors: kInvalidArgument when malformed or not `size` long.
std::string EncodeElementStates(const std::vector<core::ElementState>& states);
Result<std::vector<core::ElementState>> DecodeElementStates(std::string_view text, size_t size);
// An array element's state as its stored row spells it (a restart's).
core::ElementState StoredElementState(const store::StoredJob& row);

// `INDEX` or `FIRST-LAST` (the query parameter `index`, the CLI's `ID[2-7]`) -> the range.
// Errors: kInvalidArgument "index: expected ...".
Result<std::pair<int32_t, int32_t>> ParseIndexRange(std::string_view text);

// An array's elements counted by state: {"PENDING": n, "HELD": n, "RUNNING": n (admitting
// or running), "DONE": n, "EXIT": n, "CANCELLED": n}; from the core's array, or from the
// stored states when the core no longer holds it (`stored`, may be "").
std::vector<std::pair<std::string, int64_t>> ElementCounts(const core::JobArray* array,
                                                           std::string_view stored);

// The state an array shows as a whole: EXIT, CANCELLED or DONE once every element ended
// (as done(ID) reads it), RUNNING while one runs, HELD when only held ones wait, else PENDING.
std::string AggregateState(const core::JobArray& array);


}  // namespace sluice::server
