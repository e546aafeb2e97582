// JobListing: GET /v1/jobs written as it goes (issue 45; docs/api.md "GET /v1/jobs",
// docs/performance.md "Streamed listings"). The reply is the same JSON array of job objects as
// ever, produced in chunks: each chunk copies at most `Options::jobs` jobs' listing fields
// under the controller's lock (ListEntryOf, views.h) and writes their text without it, so a
// listing of a million jobs holds the lock one chunk at a time and holds one chunk's memory,
// whatever the number of jobs. The HTTP front end sends each chunk as an HTTP chunk.
//
// Query parameters: user, queue, state, pending_reasons, arrays, fields, limit (the N most
// recent matching jobs); an unknown one, a bad value, an unknown queue, or a user with no job
// who is neither configured nor an account of this host is an error from Open, before the
// first byte, so it still gets its 400.
//
// Representation: the book is a map by job id; a chunk resumes after the last id the previous
// one visited (`after_`). A chunk visits at most `Options::visits` book entries, so a filter
// that matches few jobs does not hold the lock for a whole pass either (a chunk may then
// carry no job). With `limit=N`, a first phase walks back from the highest id, chunk by chunk,
// to the N-th matching job; the listing starts there and stops after N jobs.
// Consistency: a listing is not one snapshot (squeue's is not either). Ids only grow and each
// chunk starts past the last id written, so no job appears twice and the array is always
// well-formed. A job present and matching from the first chunk to the last appears exactly
// once, as it was when its chunk was copied (a job that ended meanwhile shows its end state);
// a job submitted during the listing appears when its id is still ahead of the listing; one
// forgotten (keep_ended_seconds) or whose state left the filter before its chunk does not.
// Thread-safety: a listing belongs to one thread (the HTTP worker writing the reply); Open and
// Next REQUIRE the context's mutex that guards the book and the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "config/cluster_yaml.h"
#include "core/model/cluster_state.h"
#include "server/job_book.h"
#include "wire/job_json.h"

namespace sluice::server {

// The filters and shape of a plain (unpaged) listing.
struct JobListQuery {
  std::string user;                 // "" every user
  std::string queue;                // "" every queue
  std::vector<std::string> states;  // upper case; empty: every state
  bool reasons = false;             // pending_reasons=1
  int64_t limit = -1;               // -1: every matching job; else the N most recent
  std::optional<wire::JobFields> fields;
  bool arrays = false;  // the arrays' own objects as they are (`jobs -A`), not as listed

  // `state`: the job's listed state (ListedJobState).
  bool Matches(const JobInfo& job, const std::string& state) const;
};

// The query, or kInvalidArgument naming the parameter and what it expects.
Result<JobListQuery> ParseJobListQuery(const std::map<std::string, std::string>& query);

// The state a listing shows a job with: its own, but an array's object stands for its
// elements without objects of their own (JobBook::ListedArrayState; issue 47.5) unless the
// arrays are asked for as they are; nullopt: not listed.
std::optional<std::string> ListedJobState(const JobBook& book, const JobInfo& job, bool arrays);

struct JobListingOptions {
  size_t jobs = 256;     // job objects per chunk at most
  size_t visits = 4096;  // book entries one chunk looks at, at most (filters that skip many)
};

class JobListing {
 public:
  using Options = JobListingOptions;

  // REQUIRES: the context's mutex held. Errors: kInvalidArgument (a bad parameter, no queue of
  // that name, a user no one knows).
  static Result<std::unique_ptr<JobListing>> Open(const JobBook& book,
                                                  const core::ClusterState& state,
                                                  const config::AuthConfig& auth,
                                                  const std::map<std::string, std::string>& query,
                                                  Options options);

  // Appends the next chunk's text to `out`: "[" before the first job, "]" after the last (then
  // done()). It may append nothing (a chunk of the `limit` walk, or one that matched no job).
  // REQUIRES: `lock` owns the context's mutex; it is released while the text is written and
  // held again on return. Does nothing once done().
  void Next(MutexLock& lock, const JobBook& book, const core::ClusterState& state,
            std::string& out);
  bool done() const { return done_; }

 private:
  JobListing(JobListQuery query, Options options);
  // One chunk of the `limit` walk: back from `seek_before_` until `limit` matches are found.
  void SeekStep(const JobBook& book);

  JobListQuery query_;
  Options options_;
  bool seeking_ = false;          // the `limit` walk is not over yet
  JobId seek_before_ = 0;         // the walk resumes below this id (0: from the top)
  int64_t seek_found_ = 0;        // matches the walk has seen
  JobId from_ = 0;                // the first id the listing may show
  std::optional<JobId> after_;    // the last id visited; the next chunk starts past it
  int64_t left_ = -1;             // jobs still to write under `limit` (-1: no limit)
  bool opened_ = false;           // "[" written
  bool first_job_ = true;         // no job written yet (no comma before the next)
  bool done_ = false;             // "]" written
};

}  // namespace sluice::server
