#include "cli/compat/job_lookup.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <map>

#include "base/array_ids.h"
#include "client/json_array_stream.h"
#include "wire/history_json.h"

namespace sluice::cli::compat {
namespace {

using client::compat::CompatJob;
using nlohmann::json;

// History pages read when looking for one job: its rows come newest first, so an id not in
// the first pages ended long ago.
constexpr int kHistoryPages = 20;

// An account's ids as FillAccount sets them (uid -1: not in the account database).
struct AccountIds {
  int64_t uid = -1;
  int64_t gid = -1;
  std::string group;
};
// A listing's accounts, looked up once each: a million jobs have few owners.
using AccountCache = std::map<std::string, AccountIds>;

AccountIds LookUpAccount(const std::string& account) {
  AccountIds ids;
  if (const passwd* pw = getpwnam(account.c_str()); pw != nullptr) {
    ids.uid = pw->pw_uid;
    ids.gid = pw->pw_gid;
    if (const group* gr = getgrgid(pw->pw_gid); gr != nullptr) ids.group = gr->gr_name;
  }
  return ids;
}

// The account database's ids for scontrol's UserId=name(uid) GroupId=group(gid).
void FillAccount(CompatJob& job, AccountCache* cache = nullptr) {
  const std::string& account = job.account.empty() ? job.user : job.account;
  AccountIds ids;
  if (cache == nullptr) {
    ids = LookUpAccount(account);
  } else {
    auto [known, added] = cache->try_emplace(account);
    if (added) known->second = LookUpAccount(account);
    ids = known->second;
  }
  if (ids.uid >= 0) {
    job.uid = ids.uid;
    job.gid = ids.gid;
    job.group = ids.group;
  }
  if (IsArrayElement(job.id)) {  // the API's element id: the array's id and the index
    job.index = ArrayIndexOf(job.id);
    job.id = ArrayIdOf(job.id);
  }
}

std::optional<int64_t> Number(std::string_view text, int64_t min = 1) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min) return std::nullopt;
  return value;
}

}  // namespace

Result<std::unique_ptr<client::RestClient>> Connect() {
  Result<client::ClientOptions> options = client::ResolveClientOptions("", "", "");
  if (!options) return options.error();
  return std::make_unique<client::RestClient>(*options);
}

Result<int64_t> ParseJobId(const std::string& text) {
  const size_t sep = text.find_first_of("_[");
  const std::string_view id = std::string_view(text).substr(0, sep);
  const std::optional<int64_t> array = Number(id);
  if (!array || *array > kMaxArrayJobId) return InvalidArgument("Invalid job id " + text);
  if (sep == std::string::npos) return *array;
  std::string_view index = std::string_view(text).substr(sep + 1);
  if (text[sep] == '[') {
    if (!index.ends_with("]")) return InvalidArgument("Invalid job id " + text);
    index.remove_suffix(1);
  }
  const std::optional<int64_t> element = Number(index, 0);
  if (!element || *element > kMaxArrayIndex) return InvalidArgument("Invalid job id " + text);
  return ArrayElementId(*array, static_cast<int32_t>(*element));
}

Result<CompatJob> FindJob(client::RestClient& rest, int64_t id) {
  Result<json> live = rest.Get("/v1/jobs/" + std::to_string(id));
  if (live) {
    CompatJob job = client::compat::JobFromObject(*live);
    FillAccount(job);
    return job;
  }
  if (live.error().code() != StatusCode::kNotFound) return live.error();
  std::string cursor;
  for (int page = 0; page < kHistoryPages; ++page) {
    Result<json> rows =
        rest.Get("/v1/history?user=" + CurrentUser() + "&limit=1000" +
                 (cursor.empty() ? "" : "&cursor=" + cursor));
    if (!rows) return rows.error();
    for (const json& row : rows->value("jobs", json::array())) {
      Result<wire::HistoryEntry> entry = wire::ParseHistoryEntry(row);  // an element: ID, index
      if (!entry) return entry.error();
      if (entry->id != id || entry->state == wire::kRequeuedRun) continue;  // its last run only
      CompatJob job = client::compat::JobFromHistory(*entry);
      FillAccount(job);
      return job;
    }
    const json next = rows->value("next_cursor", json());
    if (!next.is_string()) break;
    cursor = next.get<std::string>();
  }
  return NotFound("job " + std::to_string(id) + " is not known");
}

Status ForEachLiveJob(client::RestClient& rest, const std::string& query,
                      const std::function<void(CompatJob)>& each) {
  AccountCache accounts;
  return client::ForEachElement(rest, "/v1/jobs" + (query.empty() ? "" : "?" + query),
                                [&](const json& object) {
                                  CompatJob job = client::compat::JobFromObject(object);
                                  FillAccount(job, &accounts);
                                  each(std::move(job));
                                  return true;
                                });
}

Result<std::vector<CompatJob>> LiveJobs(client::RestClient& rest, const std::string& query) {
  std::vector<CompatJob> out;
  SLUICE_RETURN_IF_ERROR(
      ForEachLiveJob(rest, query, [&](CompatJob job) { out.push_back(std::move(job)); }));
  return out;
}

Result<std::vector<CompatJob>> HistoryJobs(client::RestClient& rest, const std::string& query) {
  std::vector<CompatJob> out;
  std::string cursor;
  for (int page = 0; page < kHistoryPages; ++page) {
    Result<json> rows = rest.Get("/v1/history?limit=1000&" + query +
                                 (cursor.empty() ? "" : "&cursor=" + cursor));
    if (!rows) return rows.error();
    for (const json& row : rows->value("jobs", json::array())) {
      Result<wire::HistoryEntry> entry = wire::ParseHistoryEntry(row);
      if (!entry) return entry.error();
      // A job's earlier runs (issue 47.6) are not jobs: sacct shows them only with
      // --duplicates, which the drop-in does not take.
      if (entry->state == wire::kRequeuedRun) continue;
      out.push_back(client::compat::JobFromHistory(*entry));
      FillAccount(out.back());
    }
    const json next = rows->value("next_cursor", json());
    if (!next.is_string()) break;
    cursor = next.get<std::string>();
  }
  return out;
}

std::string CurrentUser() {
  if (const char* user = std::getenv("USER"); user != nullptr && *user != '\0') return user;
  if (const passwd* pw = getpwuid(getuid()); pw != nullptr) return pw->pw_name;
  return "nobody";
}

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace sluice::cli::compat
