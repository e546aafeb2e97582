#include "wire/history_json.h"

#include <algorithm>
#include <charconv>

#include "base/array_ids.h"

namespace sluice::wire {

using nlohmann::json;
using nlohmann::ordered_json;

int64_t HistoryEntry::WaitSeconds() const {
  const int64_t until = start_time > 0 ? start_time : end_time;
  return std::max<int64_t>(0, until - (queued_time > 0 ? queued_time : submit_time));
}

int64_t HistoryEntry::RunSeconds() const {
  return start_time > 0 ? std::max<int64_t>(0, end_time - start_time) : 0;
}

ordered_json HistoryEntryJson(const HistoryEntry& e) {
  ordered_json hosts = ordered_json::array();
  for (const auto& [host, slots] : e.hosts) hosts.push_back({{"host", host}, {"slots", slots}});
  // An element is the array's id and its index, as in job objects (issue 47.5).
  ordered_json out{{"id", IsArrayElement(e.id) ? ArrayIdOf(e.id) : e.id}};
  if (IsArrayElement(e.id)) out["index"] = ArrayIndexOf(e.id);
  out.update(ordered_json{
      {"name", e.name},
      {"user", e.user},
      {"queue", e.queue},
      {"state", e.state},
      {"exit_code", e.exit_code ? ordered_json(*e.exit_code) : ordered_json(nullptr)},
      {"cause", e.cause},
      {"submit_time", e.submit_time},
      {"queued_time", e.queued_time > 0 ? e.queued_time : e.submit_time},
      {"run", e.run},
      {"start_time", e.start_time > 0 ? ordered_json(e.start_time) : ordered_json(nullptr)},
      {"end_time", e.end_time},
      {"wait_seconds", e.WaitSeconds()},
      {"run_seconds", e.RunSeconds()},
      {"slots", e.slots},
      {"gpus", e.gpus},
      {"gpu_seconds", e.GpuSeconds()},
      {"hosts", hosts},
      {"cpu_seconds", e.cpu_seconds ? ordered_json(*e.cpu_seconds) : ordered_json(nullptr)},
      {"max_rss_mb", e.max_rss_mb ? ordered_json(*e.max_rss_mb) : ordered_json(nullptr)},
      {"message", e.message},
      {"steps", ordered_json(EncodeSteps(e.steps))}});
  return out;
}

namespace {

Status Wrong(const std::string& member, const char* what) {
  return InvalidArgument("history row: " + member + ": expected " + what);
}

}  // namespace

Result<HistoryEntry> ParseHistoryEntry(const json& row) {
  if (!row.is_object()) return InvalidArgument("history row: expected an object");
  HistoryEntry e;
  for (const char* member : {"id", "submit_time", "end_time", "slots"}) {
    if (!row.contains(member) || !row[member].is_number_integer()) {
      return Wrong(member, "an integer");
    }
  }
  for (const char* member : {"name", "user", "queue", "state", "cause"}) {
    if (!row.contains(member) || !row[member].is_string()) return Wrong(member, "a string");
  }
  e.id = row["id"].get<JobId>();
  if (row.contains("index") && row["index"].is_number_integer()) {
    const int64_t index = row["index"].get<int64_t>();
    if (index < 0 || index > kMaxArrayIndex || e.id < 1 || e.id > kMaxArrayJobId) {
      return Wrong("index", "an array element's index");
    }
    e.id = ArrayElementId(e.id, static_cast<int32_t>(index));
  }
  e.name = row["name"].get<std::string>();
  e.user = row["user"].get<std::string>();
  e.queue = row["queue"].get<std::string>();
  e.state = row["state"].get<std::string>();
  e.cause = row["cause"].get<std::string>();
  e.submit_time = row["submit_time"].get<int64_t>();
  e.end_time = row["end_time"].get<int64_t>();
  e.slots = row["slots"].get<int32_t>();
  if (row.contains("exit_code") && row["exit_code"].is_number_integer()) {
    e.exit_code = row["exit_code"].get<int32_t>();
  }
  if (row.contains("queued_time") && row["queued_time"].is_number_integer()) {
    e.queued_time = row["queued_time"].get<int64_t>();
  }
  if (row.contains("run") && row["run"].is_number_integer()) e.run = row["run"].get<int32_t>();
  if (row.contains("start_time") && row["start_time"].is_number_integer()) {
    e.start_time = row["start_time"].get<int64_t>();
  }
  if (row.contains("cpu_seconds") && row["cpu_seconds"].is_number()) {
    e.cpu_seconds = row["cpu_seconds"].get<double>();
  }
  if (row.contains("gpus") && row["gpus"].is_number_integer()) e.gpus = row["gpus"].get<int32_t>();
  if (row.contains("max_rss_mb") && row["max_rss_mb"].is_number_integer()) {
    e.max_rss_mb = row["max_rss_mb"].get<int64_t>();
  }
  if (row.contains("message") && row["message"].is_string()) {
    e.message = row["message"].get<std::string>();
  }
  // Absent from an older server's rows; present, it is read strictly (a step the client cannot
  // read would vanish from `history` output without a word).
  if (row.contains("steps")) {
    Result<std::vector<StepRecord>> steps = DecodeStepsJson(row["steps"]);
    if (!steps) return InvalidArgument("history row " + std::to_string(e.id) + ": " +
                                       steps.error().message());
    e.steps = std::move(*steps);
  }
  if (row.contains("hosts") && row["hosts"].is_array()) {
    for (const json& h : row["hosts"]) {
      if (!h.is_object() || !h.contains("host") || !h["host"].is_string()) {
        return Wrong("hosts", "objects with a host name");
      }
      e.hosts.emplace_back(h["host"].get<std::string>(), h.value("slots", 0));
    }
  }
  return e;
}

std::string EncodeHistoryCursor(int64_t end_time, JobId id) {
  return std::to_string(end_time) + "." + std::to_string(id);
}

Result<std::pair<int64_t, JobId>> DecodeHistoryCursor(const std::string& cursor) {
  const size_t dot = cursor.find('.');
  int64_t end = 0;
  JobId id = 0;
  const auto parse = [](std::string_view text, int64_t& out) {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && ptr == text.data() + text.size() && !text.empty();
  };
  if (dot == std::string::npos || !parse(std::string_view(cursor).substr(0, dot), end) ||
      !parse(std::string_view(cursor).substr(dot + 1), id)) {
    return InvalidArgument("cursor: not a cursor of GET /v1/history: '" + cursor.substr(0, 40) +
                           "'");
  }
  return std::make_pair(end, id);
}

void HistoryTotals::Add(const HistoryEntry& e) {
  jobs += e.state == kRequeuedRun ? 0 : 1;  // an earlier run: its job is counted by its last
  slot_hours += double(e.slots) * double(e.RunSeconds()) / 3600.0;
  gpu_hours += double(e.GpuSeconds()) / 3600.0;
  if (e.cpu_seconds) {
    cpu_hours += *e.cpu_seconds / 3600.0;
    cpu_jobs += 1;
  }
  wait_seconds += e.WaitSeconds();
}

void HistorySummary::Add(const HistoryEntry& e) {
  by_user[e.user].Add(e);
  by_queue[e.queue].Add(e);
  total.Add(e);
}

namespace {

ordered_json TotalsJson(const char* key_name, const std::string& key, const HistoryTotals& t) {
  ordered_json out;
  if (key_name != nullptr) out[key_name] = key;
  out["jobs"] = t.jobs;
  out["slot_hours"] = t.slot_hours;
  out["gpu_hours"] = t.gpu_hours;
  out["cpu_hours"] = t.cpu_jobs > 0 ? ordered_json(t.cpu_hours) : ordered_json(nullptr);
  out["average_wait_seconds"] = t.AverageWaitSeconds();
  return out;
}

}  // namespace

ordered_json HistorySummaryJson(const HistorySummary& summary) {
  ordered_json users = ordered_json::array();
  for (const auto& [user, t] : summary.by_user) users.push_back(TotalsJson("user", user, t));
  ordered_json queues = ordered_json::array();
  for (const auto& [queue, t] : summary.by_queue) queues.push_back(TotalsJson("queue", queue, t));
  return ordered_json{
      {"users", users}, {"queues", queues}, {"total", TotalsJson(nullptr, "", summary.total)}};
}

}  // namespace sluice::wire
