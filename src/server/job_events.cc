#include "server/job_events.h"

#include <algorithm>

#include "store/history.h"

namespace sluice::server {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// The allocation's hosts as [[name, slots]...] ("" or unreadable: none).
json HostsOf(const std::string& allocation) {
  json hosts = json::array();
  const json alloc = json::parse(allocation.empty() ? "{}" : allocation, nullptr, false);
  if (!alloc.is_object()) return hosts;
  for (const json& g : alloc.value("hosts", json::array())) {
    if (g.is_object()) hosts.push_back({g.value("host", ""), g.value("slots", 0)});
  }
  return hosts;
}

int64_t Int(const json& event, const char* key) {
  auto it = event.find(key);
  return it != event.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string Text(const json& event, const char* key) {
  auto it = event.find(key);
  return it != event.end() && it->is_string() ? it->get<std::string>() : "";
}

bool IsRequeue(const json& event) { return Text(event, "event") == "requeue"; }

}  // namespace

namespace {

// For a stored row and a record's row alike: `Row::events` reads as a std::string and takes one.
template <typename Row>
void AppendEventTo(Row& row, json event) {
  const std::string& text = row.events;
  json events = json::parse(text.empty() ? "[]" : text, nullptr, false);
  if (!events.is_array()) events = json::array();
  const bool requeue = IsRequeue(event);
  events.push_back(std::move(event));
  // Each kind has its own cap, so changes never push out the runs (their accounting).
  const size_t cap = requeue ? kMaxJobRuns : kMaxJobEvents;
  size_t kept = 0;
  for (const json& e : events) kept += IsRequeue(e) == requeue;
  for (auto it = events.begin(); kept > cap && it != events.end();) {
    if (IsRequeue(*it) == requeue) {
      it = events.erase(it);
      --kept;
    } else {
      ++it;
    }
  }
  row.events = events.dump();
}

template <typename Row>
void NoteRequeueOf(Row& row, const std::string& state, int64_t now, const std::string& why) {
  json event = {{"event", "requeue"},
                {"time", now},
                {"why", why},
                {"start_time", row.start_time},
                {"hosts", HostsOf(row.allocation)}};
  if (store::IsEndedState(state)) {  // an ended job submitted again
    event["state"] = state;
    event["end_time"] = row.end_time;
    if (row.exit_code) event["exit_code"] = *row.exit_code;
  }
  AppendEventTo(row, std::move(event));
}

}  // namespace

void AppendJobEvent(store::StoredJob& row, json event) { AppendEventTo(row, std::move(event)); }
void AppendJobEvent(JobRow& row, json event) { AppendEventTo(row, std::move(event)); }

void NoteRequeue(store::StoredJob& row, int64_t now, const std::string& why) {
  NoteRequeueOf(row, row.state, now, why);
}
void NoteRequeue(JobRow& row, const std::string& state, int64_t now, const std::string& why) {
  NoteRequeueOf(row, state, now, why);
}

namespace {

// The events of a row's `events` text (JobEvents).
std::vector<json> EventsIn(const std::string& text) {
  std::vector<json> out;
  if (text.empty()) return out;
  const json events = json::parse(text, nullptr, false);
  if (!events.is_array()) return out;
  for (const json& e : events) {
    if (e.is_object() && e.contains("event") && e.contains("time")) out.push_back(e);
  }
  return out;
}

Requeues RequeuesIn(int64_t submit_time, const std::string& events) {
  Requeues out{.queued_time = submit_time};
  for (const json& e : EventsIn(events)) {
    if (!IsRequeue(e)) continue;
    ++out.count;
    out.queued_time = Int(e, "time");
  }
  return out;
}

}  // namespace

std::vector<json> JobEvents(const store::StoredJob& row) { return EventsIn(row.events); }

Requeues RequeuesOf(const store::StoredJob& row) { return RequeuesIn(row.submit_time, row.events); }
Requeues RequeuesOf(const JobRow& row) { return RequeuesIn(row.submit_time, row.events); }

std::vector<wire::HistoryEntry> JobRuns(const store::StoredJob& row, wire::HistoryEntry current) {
  std::vector<wire::HistoryEntry> runs;
  int64_t queued = row.submit_time;
  for (const json& e : JobEvents(row)) {
    if (!IsRequeue(e)) continue;
    wire::HistoryEntry run{.id = current.id,
                           .name = current.name,
                           .user = current.user,
                           .queue = current.queue,
                           .state = wire::kRequeuedRun,
                           .cause = Text(e, "why"),
                           .submit_time = current.submit_time,
                           .queued_time = queued,
                           .run = static_cast<int32_t>(runs.size()) + 1,
                           .start_time = Int(e, "start_time"),
                           .end_time = Int(e, "end_time") > 0 ? Int(e, "end_time") : Int(e, "time")};
    if (e.contains("exit_code") && e["exit_code"].is_number_integer()) {
      run.exit_code = e["exit_code"].get<int32_t>();
    }
    if (!Text(e, "state").empty()) run.message = "ended " + Text(e, "state") + ", then requeued";
    for (const json& h : e.value("hosts", json::array())) {
      if (!h.is_array() || h.size() != 2 || !h[0].is_string() || !h[1].is_number_integer()) {
        continue;
      }
      run.hosts.emplace_back(h[0].get<std::string>(), h[1].get<int32_t>());
      run.slots += h[1].get<int32_t>();
    }
    runs.push_back(std::move(run));
    queued = Int(e, "time");
  }
  current.run = static_cast<int32_t>(runs.size()) + 1;
  current.queued_time = queued;
  runs.push_back(std::move(current));
  return runs;
}

ordered_json JobTimeline(const store::StoredJob& row) {
  std::vector<ordered_json> lines;
  lines.push_back({{"time", row.submit_time}, {"event", "submit"}});
  const auto start = [&](int64_t at, const json& hosts) {
    if (at > 0) lines.push_back({{"time", at}, {"event", "start"}, {"hosts", hosts}});
  };
  const auto end = [&](int64_t at, const std::string& state, const json& exit_code,
                       const std::string& cause) {
    ordered_json line = {{"time", at}, {"event", "end"}, {"state", state}};
    line["exit_code"] = exit_code;
    if (!cause.empty()) line["cause"] = cause;
    lines.push_back(std::move(line));
  };
  for (const json& e : JobEvents(row)) {
    if (IsRequeue(e)) {
      start(Int(e, "start_time"), e.value("hosts", json::array()));
      if (!Text(e, "state").empty()) {
        end(Int(e, "end_time"), Text(e, "state"), e.value("exit_code", json(nullptr)), "");
      }
      lines.push_back({{"time", Int(e, "time")}, {"event", "requeue"}, {"why", Text(e, "why")}});
      continue;
    }
    ordered_json line = {{"time", Int(e, "time")}, {"event", Text(e, "event")}};
    for (const auto& [key, value] : e.items()) {
      if (key != "time" && key != "event") line[key] = value;
    }
    lines.push_back(std::move(line));
  }
  start(row.start_time, HostsOf(row.allocation));
  if (store::IsEndedState(row.state)) {
    end(row.end_time, row.state, row.exit_code ? json(*row.exit_code) : json(nullptr), row.cause);
  }
  std::stable_sort(lines.begin(), lines.end(), [](const ordered_json& a, const ordered_json& b) {
    return a["time"].get<int64_t>() < b["time"].get<int64_t>();
  });
  return ordered_json(lines);
}

}  // namespace sluice::server
