// ArrayRequests: what users ask of job arrays (R-UX-3; docs/api.md "Job arrays"): cancel,
// hold and release a whole array, one element `ID[I]` or a range `ID[A-B]`, and the detail
// of one element. Submission goes through JobRequests (IngestArray, array_requests.cc).
//
// Steps of an action on the elements of array ID with an index in [first, last]:
//  1. the caller owns the array (administrators: any);
//  2. elements that are not Jobs yet change in the core by runs of consecutive positions
//     (ArrayElementsCancelled / ArrayElementsHeld), so no run covers a running element;
//  3. elements that are Jobs go one by one through JobRequests::CancelJob/HoldJob, exactly
//     as a plain job: a running element is killed by its agent, a pending one ends at once;
//  4. the array's row (element states, aggregate state) joins the batch; the answer (the
//     array's object with its element counts) is sent once the batch committed.
// Outcomes: kNotFound (no such array, or no element in the range), kPermissionDenied
// (another user's array), kFailedPrecondition (no element in the range could change, or the
// array has ended and left the core), kInvalidArgument (an index given for a plain job).
// Thread-safety: as JobRequests (the caller's lock on the context's mutex).
// Implements R-UX-3 (cancel, hold and release of arrays, elements and ranges).
#pragma once

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/array_ids.h"
#include "server/context.h"
#include "server/job_book.h"
#include "server/job_requests.h"

namespace sluice::server {

enum class ArrayAction { kCancel, kHold, kRelease };

class ArrayRequests {
 public:
  using Lock = MutexLock;

  ArrayRequests(ServerContext& ctx, JobBook& book, JobRequests& requests)
      : ctx_(ctx), book_(book), requests_(requests) {}

  // Whether `id` is an array's id or an element's: its actions go through Act.
  bool Handles(JobId id);
  // The action on the elements of array `id` with an index in [first, last].
  Result<nlohmann::json> Act(Lock& lock, const Caller& caller, JobId id, int32_t first,
                             int32_t last, ArrayAction action);
  // GET /v1/jobs/ID?index=I: element `id`'s object, also when it is not a Job yet.
  Result<nlohmann::json> Get(JobId element);

 private:
  // Step 2 of Act: the runs of elements that are not Jobs; the number changed.
  int64_t ChangeWaitingRuns(JobId id, int32_t first, int32_t last, ArrayAction action);
  // Step 3 of Act: the element Jobs; the number changed.
  int64_t ChangeElementJobs(const Caller& caller, JobId id, int32_t first, int32_t last,
                            ArrayAction action, store::WriteBatch& batch);

  ServerContext& ctx_;
  JobBook& book_;
  JobRequests& requests_;
};

}  // namespace sluice::server
