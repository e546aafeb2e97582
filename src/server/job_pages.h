// Paged, sorted and searched job listings for GET /v1/jobs (the dashboard's Jobs page,
// R-UI-1): `offset`, `sort`, `order`, `search`, `host` and `array` (an array's elements) on
// top of the listing's `user`, `queue`, `state`, `pending_reasons`, `fields` and `limit` (the
// page size here). The body is the same array of job objects as the plain listing; the
// number of matching jobs goes in the `X-Total-Count` header, so a page of 50 out of 100,000
// jobs costs one pass over the book (filter and sort keys), a partial sort and 50 job objects.
// An array's own object is listed as JobBook::ListedArrayState says (issue 47.5).
//
// Representation: a query is parsed whole before any work (a bad parameter is a 400 naming
// it). Sorting is stable on the key, then the job id (ascending or descending with the
// order), so pages never overlap nor skip a job while the book does not change.
// Thread-safety: ListJobPage REQUIRES the context's mutex held on entry (it releases it while
// it sorts and holds it again on return).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/model/cluster_state.h"
#include "server/job_book.h"
#include "wire/job_json.h"

namespace sluice::server {

struct JobPageQuery {
  std::string user;                 // "" every user
  std::string queue;                // "" every queue
  std::vector<std::string> states;  // upper case; empty: every state
  std::string host;                 // "" any host; else jobs with an allocation on it
  std::string search;               // lower case; "" none
  JobId array = 0;                  // 0 every job; else the elements of this array (47.5)
  std::string sort = "id";  // id, submit_time, start_time, end_time, user, queue, state, name
  bool descending = true;
  int64_t offset = 0;
  int64_t limit = 50;  // page size, 1 ... 1000
  bool reasons = false;
  std::optional<wire::JobFields> fields;
};

// Whether a GET /v1/jobs query asks for a page (any of offset, sort, order, search, host).
bool IsJobPageQuery(const std::map<std::string, std::string>& query);
// The query, or kInvalidArgument naming the parameter and what it expects.
Result<JobPageQuery> ParseJobPageQuery(const std::map<std::string, std::string>& query);

// A `fields` parameter ("id,state,user"): the job members named, each one the API knows
// (wire::JobFieldNames); the listing and the pages share it.
Result<wire::JobFields> ParseJobFieldList(const std::string& value);

struct JobPage {
  std::string text;   // a JSON array of job objects
  int64_t total = 0;  // jobs matching the filters, all pages
};

// REQUIRES: `lock` owns the context's mutex that guards `book` and `state`.
JobPage ListJobPage(MutexLock& lock, const JobBook& book,
                    const core::ClusterState& state, const JobPageQuery& query);

}  // namespace sluice::server
