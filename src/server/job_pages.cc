#include "server/job_pages.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <string_view>

#include "base/array_ids.h"
#include "server/controller.h"
#include "server/job_arrays.h"
#include "server/text_parsers.h"
#include "server/views.h"

namespace sluice::server {

namespace {

constexpr const char* kSortKeys[] = {"id",   "submit_time", "start_time", "end_time",
                                     "user", "queue",       "state",      "name"};

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

Status ParseSort(const std::string& key, const std::string& value, JobPageQuery& q) {
  if (key == "sort") {
    if (std::find(std::begin(kSortKeys), std::end(kSortKeys), value) == std::end(kSortKeys)) {
      return InvalidArgument(
          "sort: expected one of id, submit_time, start_time, end_time, user, "
          "queue, state, name; got '" +
          value.substr(0, 40) + "'");
    }
    q.sort = value;
  } else if (value == "asc" || value == "desc") {
    q.descending = value == "desc";
  } else {
    return InvalidArgument("order: expected asc or desc, got '" + value.substr(0, 40) + "'");
  }
  return Status::Ok();
}

Status ParseParam(const std::string& key, const std::string& value, JobPageQuery& q) {
  if (key == "user") {
    q.user = value == "all" ? "" : value;
  } else if (key == "queue") {
    q.queue = value;
  } else if (key == "host") {
    q.host = value;
  } else if (key == "search") {
    q.search = Lower(value.substr(0, 200));
  } else if (key == "state") {
    q.states = SplitList(value);
    for (std::string& s : q.states) {
      std::transform(s.begin(), s.end(), s.begin(),
                     [](unsigned char c) { return std::toupper(c); });
    }
  } else if (key == "pending_reasons") {
    q.reasons = value == "1" || value == "true";
  } else if (key == "array") {
    Result<int64_t> id = QueryInteger(key, value, 1, kMaxArrayJobId);
    if (!id) return id.error();
    q.array = *id;
  } else if (key == "fields") {
    Result<wire::JobFields> fields = ParseJobFieldList(value);
    if (!fields) return fields.error();
    q.fields = std::move(*fields);
  } else if (key == "sort" || key == "order") {
    return ParseSort(key, value, q);
  } else if (key == "offset" || key == "limit") {
    Result<int64_t> n = QueryInteger(key, value, key == "offset" ? 0 : 1,
                                     key == "offset" ? int64_t{1} << 40 : 1000);
    if (!n) return n.error();
    (key == "offset" ? q.offset : q.limit) = *n;
  } else {
    return InvalidArgument(key + ": unknown query parameter");
  }
  return Status::Ok();
}

// What a job is sorted by: a number or a text, then its id.
struct SortKey {
  int64_t number = 0;
  std::string text;
  JobId id = 0;
  std::shared_ptr<const JobInfo> job;
  std::string state;  // as listed
};

// Whether `text` contains `needle` (lower case), ignoring case; no allocation.
bool ContainsFolded(std::string_view text, std::string_view needle) {
  if (needle.size() > text.size()) return false;
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

bool SpecContains(const nlohmann::json& spec, const char* field, std::string_view needle) {
  auto it = spec.find(field);
  return it != spec.end() && it->is_string() &&
         ContainsFolded(it->get_ref<const std::string&>(), needle);
}

// The job's listed fixed members (wire::FixedJobText: name, project, the command's line...)
// as a JSON object: the search and the sort by name read them there, not in the spec, which
// a store that serves specs would read row by row (issue 45).
nlohmann::json FixedMembersOf(const JobInfo& job) {
  if (!job.fixed_text) return nlohmann::json::object();
  return nlohmann::json::parse("{" + *job.fixed_text + "}", nullptr, /*allow_exceptions=*/false);
}

// The search: id, name, user, project, queue, then the command's line (its words joined by
// spaces: a search without a space matches it where it matches one of its words).
bool SearchMatches(const std::string& search, const JobInfo& job) {
  if (std::to_string(job.row.id).find(search) != std::string::npos) return true;
  if (ContainsFolded(job.user.str(), search)) return true;
  if (ContainsFolded(job.queue.str(), search)) return true;
  const nlohmann::json fixed = FixedMembersOf(job);
  for (const char* field : {"name", "project", "command"}) {
    if (SpecContains(fixed, field, search)) return true;
  }
  return false;
}

// `state`: the job's listed state (an array's object: JobBook::ListedArrayState).
bool Matches(const JobPageQuery& q, const JobInfo& job, const std::string& state) {
  if (!q.user.empty() && job.user != q.user) return false;
  if (!q.queue.empty() && job.queue != q.queue) return false;
  if (q.array != 0 && (!IsArrayElement(job.row.id) || ArrayIdOf(job.row.id) != q.array)) {
    return false;
  }
  if (!q.states.empty() &&
      std::find(q.states.begin(), q.states.end(), state) == q.states.end()) {
    return false;
  }
  if (!q.host.empty() && std::none_of(job.launch().hosts.begin(), job.launch().hosts.end(),
                                      [&](const auto& h) { return h.first == q.host; })) {
    return false;
  }
  return q.search.empty() || SearchMatches(q.search, job);
}

SortKey KeyOf(const JobPageQuery& q, const std::shared_ptr<JobInfo>& job) {
  SortKey key{.id = job->row.id, .job = job};
  const std::string& s = q.sort;
  if (s == "submit_time") key.number = job->row.submit_time;
  if (s == "start_time") key.number = job->row.start_time;
  if (s == "end_time") key.number = job->row.end_time;
  if (s == "user") key.text = job->user;
  if (s == "queue") key.text = job->queue;
  if (s == "state") key.text = job->StateText();
  if (s == "name") {
    const nlohmann::json fixed = FixedMembersOf(*job);
    key.text = fixed.is_object() ? fixed.value("name", "") : "";
  }
  return key;
}

}  // namespace

bool IsJobPageQuery(const std::map<std::string, std::string>& query) {
  for (const char* key : {"offset", "sort", "order", "search", "host", "array"}) {
    if (query.count(key) > 0) return true;
  }
  return false;
}

Result<wire::JobFields> ParseJobFieldList(const std::string& value) {
  wire::JobFields fields;
  const std::vector<std::string>& known = wire::JobFieldNames();
  for (const std::string& name : SplitList(value)) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return InvalidArgument("fields: no job field '" + name + "'");
    }
    fields.insert(name);
  }
  return fields;
}

Result<JobPageQuery> ParseJobPageQuery(const std::map<std::string, std::string>& query) {
  JobPageQuery q;
  for (const auto& [key, value] : query) {
    if (Status s = ParseParam(key, value, q); !s.ok()) return s;
  }
  return q;
}

// Steps: 1. under the lock, the matching jobs' sort keys; 2. without it, a partial sort up
// to the page's end; 3. under the lock, the page's job objects (text written without it).
JobPage ListJobPage(MutexLock& lock, const JobBook& book,
                    const core::ClusterState& state, const JobPageQuery& query) {
  std::vector<SortKey> keys;
  for (const auto& [id, job] : book.jobs()) {
    const std::optional<std::string> listed =
        IsArrayParent(*job) ? book.ListedArrayState(id) : std::optional(job->StateText());
    if (!listed || !Matches(query, *job, *listed)) continue;
    keys.push_back(KeyOf(query, job));
    keys.back().state = *listed;
    if (query.sort == "state") keys.back().text = *listed;
  }
  lock.unlock();
  JobPage page{.text = "[", .total = static_cast<int64_t>(keys.size())};
  const bool desc = query.descending;
  const auto less = [desc](const SortKey& a, const SortKey& b) {
    if (a.number != b.number) return desc ? a.number > b.number : a.number < b.number;
    if (a.text != b.text) return desc ? a.text > b.text : a.text < b.text;
    return desc ? a.id > b.id : a.id < b.id;
  };
  const size_t begin = std::min(keys.size(), static_cast<size_t>(query.offset));
  const size_t end = std::min(keys.size(), begin + static_cast<size_t>(query.limit));
  std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(end), keys.end(),
                    less);
  lock.lock();
  std::vector<wire::JobListEntry> entries;
  for (size_t i = begin; i < end; ++i) {
    entries.push_back(ListEntryOf(*keys[i].job, book, state, query.reasons));
    entries.back().state = keys[i].state;
  }
  lock.unlock();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) page.text += ',';
    wire::AppendJobText(entries[i], page.text, query.fields ? &*query.fields : nullptr);
  }
  page.text += ']';
  lock.lock();
  return page;
}

}  // namespace sluice::server

// --- Controller::ListJobPage (controller.h) -------------------------------------------------

namespace sluice::server {

Result<JobPage> Controller::ListJobPage(const std::map<std::string, std::string>& query) {
  Result<JobPageQuery> q = ParseJobPageQuery(query);
  if (!q) return q.error();
  MutexLock lock(ctx_.mu());
  return server::ListJobPage(lock, book_, ctx_.state(), *q);
}

}  // namespace sluice::server
