#include "server/job_listing.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "server/controller.h"
#include "server/job_arrays.h"
#include "server/job_identity.h"
#include "server/job_pages.h"
#include "server/text_parsers.h"
#include "server/views.h"

namespace sluice::server {

namespace {

Status ParseParam(const std::string& key, const std::string& value, JobListQuery& q) {
  if (key == "user") {
    q.user = value == "all" ? "" : value;
  } else if (key == "queue") {
    q.queue = value;
  } else if (key == "state") {
    Result<std::vector<std::string>> states = ParseJobStates(value);
    if (!states) return states.error();
    q.states = std::move(*states);
  } else if (key == "pending_reasons") {
    q.reasons = value == "1" || value == "true";
  } else if (key == "arrays") {
    q.arrays = value == "1" || value == "true";
  } else if (key == "fields") {
    Result<wire::JobFields> fields = ParseJobFieldList(value);
    if (!fields) return fields.error();
    q.fields = std::move(*fields);
  } else if (key == "limit") {
    Result<int64_t> limit =
        QueryInteger(key, value, -1, std::numeric_limits<int64_t>::max());  // -1: no limit
    if (!limit) return limit.error();
    q.limit = *limit;
  } else {
    return InvalidArgument(key + ": unknown query parameter");
  }
  return Status::Ok();
}

// The queue a listing names exists, or the error listing the queues there are.
Status CheckQueue(const core::ClusterState& state, const std::string& queue) {
  if (queue.empty() || state.topology().FindQueue(queue)) return Status::Ok();
  std::string names;
  for (const core::Queue& q : state.topology().queues()) {
    names += (names.empty() ? "" : ", ") + q.spec.name;
  }
  return InvalidArgument("queue: no queue named '" + queue.substr(0, 40) + "'; the queues are " +
                         names);
}

// A `user` filter names someone: a configured user, an account of this host, or the owner of
// some job (a typo would otherwise list nothing and say nothing).
Status CheckUser(const JobBook& book, const config::AuthConfig& auth, const std::string& user) {
  if (user.empty() || IsKnownUser(auth, user)) return Status::Ok();
  for (const auto& [id, job] : book.jobs()) {
    if (job->user == user) return Status::Ok();
  }
  const std::string users = ConfiguredUserNames(auth);
  return InvalidArgument("user: no user '" + user.substr(0, 40) +
                         "' (not in auth.users, not an account of the controller's host)" +
                         (users.empty() ? "" : "; the configured users are " + users));
}

}  // namespace

bool JobListQuery::Matches(const JobInfo& job, const std::string& state) const {
  if (!user.empty() && job.user != user) return false;
  if (!queue.empty() && job.queue != queue) return false;
  return states.empty() || std::find(states.begin(), states.end(), state) != states.end();
}

Result<JobListQuery> ParseJobListQuery(const std::map<std::string, std::string>& query) {
  JobListQuery q;
  for (const auto& [key, value] : query) {
    SLUICE_RETURN_IF_ERROR(ParseParam(key, value, q));
  }
  return q;
}

std::optional<std::string> ListedJobState(const JobBook& book, const JobInfo& job, bool arrays) {
  if (arrays || !IsArrayParent(job)) return job.StateText();
  return book.ListedArrayState(job.row.id);
}

JobListing::JobListing(JobListQuery query, Options options)
    : query_(std::move(query)), options_(options) {
  options_.jobs = std::max<size_t>(options_.jobs, 1);
  options_.visits = std::max(options_.visits, options_.jobs);
  left_ = query_.limit;
  seeking_ = query_.limit > 0;
}

Result<std::unique_ptr<JobListing>> JobListing::Open(
    const JobBook& book, const core::ClusterState& state, const config::AuthConfig& auth,
    const std::map<std::string, std::string>& query, Options options) {
  Result<JobListQuery> q = ParseJobListQuery(query);
  if (!q) return q.error();
  SLUICE_RETURN_IF_ERROR(CheckQueue(state, q->queue));
  SLUICE_RETURN_IF_ERROR(CheckUser(book, auth, q->user));
  return std::unique_ptr<JobListing>(new JobListing(std::move(*q), options));
}

void JobListing::SeekStep(const JobBook& book) {
  const JobBook::Jobs& jobs = book.jobs();
  auto it = std::make_reverse_iterator(seek_before_ == 0 ? jobs.end()
                                                         : jobs.lower_bound(seek_before_));
  for (size_t visits = 0; it != jobs.rend() && visits < options_.visits; ++it, ++visits) {
    seek_before_ = it->first;
    const std::optional<std::string> state = ListedJobState(book, *it->second, query_.arrays);
    if (!state || !query_.Matches(*it->second, *state)) continue;
    if (++seek_found_ == query_.limit) {
      from_ = it->first;
      seeking_ = false;
      return;
    }
  }
  if (it == jobs.rend()) seeking_ = false;  // fewer than `limit` match: all of them, from_ 0
}

// Steps: 1. (limit) one chunk of the walk back, and return; 2. under the lock, the listing
// fields of up to options_.jobs matching jobs past `after_`; 3. without it, their text.
void JobListing::Next(MutexLock& lock, const JobBook& book, const core::ClusterState& state,
                      std::string& out) {
  if (done_) return;
  if (seeking_) {
    SeekStep(book);
    return;
  }
  const JobBook::Jobs& jobs = book.jobs();
  auto it = after_ ? jobs.upper_bound(*after_) : jobs.lower_bound(from_);
  std::vector<wire::JobListEntry> entries;
  const size_t most = left_ < 0 ? options_.jobs
                                : std::min(options_.jobs, static_cast<size_t>(left_));
  for (size_t visits = 0; it != jobs.end() && visits < options_.visits && entries.size() < most;
       ++it, ++visits) {
    after_ = it->first;
    const std::optional<std::string> listed = ListedJobState(book, *it->second, query_.arrays);
    if (!listed || !query_.Matches(*it->second, *listed)) continue;
    entries.push_back(ListEntryOf(*it->second, book, state, query_.reasons));
    entries.back().state = *listed;
  }
  if (left_ >= 0) left_ -= static_cast<int64_t>(entries.size());
  const bool last = it == jobs.end() || left_ == 0;
  lock.unlock();
  if (!opened_) out += '[';
  opened_ = true;
  for (const wire::JobListEntry& entry : entries) {
    if (!first_job_) out += ',';
    first_job_ = false;
    wire::AppendJobText(entry, out, query_.fields ? &*query_.fields : nullptr);
  }
  if (last) out += ']';
  done_ = last;
  lock.lock();
}

// --- Controller's listing (controller.h) -------------------------------------------------------

Result<std::unique_ptr<JobListing>> Controller::OpenJobListing(
    const std::map<std::string, std::string>& query) {
  return OpenJobListing(query, JobListingOptions{});
}

Result<std::unique_ptr<JobListing>> Controller::OpenJobListing(
    const std::map<std::string, std::string>& query, const JobListingOptions& options) {
  MutexLock lock(ctx_.mu());
  ctx_.writes().AwaitWrites(lock, kReadWaitsForWrites);
  return JobListing::Open(book_, ctx_.state(), settings_.auth(), query, options);
}

void Controller::NextJobChunk(JobListing& listing, std::string& out) {
  MutexLock lock(ctx_.mu());
  listing.Next(lock, book_, ctx_.state(), out);
}

Result<std::string> Controller::ListJobs(const std::map<std::string, std::string>& query) {
  Result<std::unique_ptr<JobListing>> listing = OpenJobListing(query);
  if (!listing) return listing.error();
  std::string text;
  while (!(*listing)->done()) NextJobChunk(**listing, text);
  return text;
}

}  // namespace sluice::server
