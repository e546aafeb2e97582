// Refusal at submission (R-UX-2): POST /v1/jobs and /v1/jobs/batch are refused (a Refusal
// kNeverRuns, HTTP 422) for a job that can never run (core/admission/submission_check.h: no configured host could hold it, or it
// asks more than a queue or limit ever allows), store nothing and take no job id:
//   {"error": "jobs[3]: asks 100 tasks; by slots and per-task resources the eligible hosts
//              can hold 16",
//    "cause": {"reason": "UNSCHEDULABLE", "message": "asks 100 tasks; ...", "index": 3,
//              "queue": "normal", "details": [{"code": "NO_RESOURCE", "resource": "tasks",
//              "needed": 100, "available": 16}]}}
// (`index` only for a batch; `details` as in a pending job's reasons, docs/reasons-json.md;
// empty for a policy maximum). A batch is refused whole, naming its first impossible job.
// Each refused job counts in `sluice_unschedulable_total` of its queue.
// Thread-safety: REQUIRES the context's mutex held for every call.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/alloc/resreq_allocator.h"
#include "server/context.h"
#include "server/outcome.h"

namespace sluice::server {

class SubmissionRefusals {
 public:
  // `specs` are normalized (ParseSubmission). Returns the refusal when one of them can
  // never run, else nullopt (the submission goes on).
  std::optional<Refusal> Check(ServerContext& ctx, const Caller& caller,
                             const std::vector<nlohmann::json>& specs, bool batch);
  // Jobs refused so far in `queue`.
  int64_t Count(const std::string& queue) const;

 private:
  core::ResreqAllocator allocator_;
  std::map<std::string, int64_t> refused_by_queue_;
};

}  // namespace sluice::server
