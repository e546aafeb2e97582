#include "client/format.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

#include "client/array_format.h"
#include "client/printable.h"
#include "client/rsv_format.h"
#include "core/explain/render.h"
#include "wire/reasons_json.h"

namespace sluice::client {
namespace {

using nlohmann::json;
using Row = std::vector<std::string>;

std::string Text(const json& object, const char* key) {
  if (!object.is_object()) return "-";
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "-";
  if (it->is_string()) {
    return it->get<std::string>().empty() ? "-" : PrintableField(it->get<std::string>());
  }
  if (it->is_boolean()) return it->get<bool>() ? "yes" : "no";
  if (it->is_number_float()) {
    const double value = it->get<double>();
    if (value == static_cast<double>(static_cast<int64_t>(value))) {
      return std::to_string(static_cast<int64_t>(value));
    }
  }
  return it->dump();
}

std::string TimeText(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return "-";
  const std::time_t t = it->get<int64_t>();
  std::tm tm{};
  localtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%b %d %H:%M:%S", &tm);
  return buffer;
}

}  // namespace

std::string FormatTable(const Row& header, const std::vector<Row>& rows) {
  const std::vector<size_t> widths = ColumnWidths(header, rows);
  std::string out = TableLine(header, widths);
  for (const Row& row : rows) out += TableLine(row, widths);
  return out;
}

namespace {

// "h1:2,h2:2" from [{"name": "h1", "slots": 2}, ...].
std::string HostsText(const json& job) {
  auto it = job.find("hosts");
  if (it == job.end() || !it->is_array() || it->empty()) return "-";
  std::string out;
  for (const json& host : *it) {
    if (!out.empty()) out += ",";
    if (host.is_string()) {
      out += host.get<std::string>();
    } else {
      out += Text(host, "name") + ":" + Text(host, "slots");
    }
  }
  return out;
}

const Row kJobHeader = {"JOBID", "USER", "STATE", "ELAPSED", "QUEUE",      "TASKS",
                        "HOSTS", "EXIT", "NAME",  "SUBMIT_TIME"};

Row JobRow(const json& job, int64_t now) {
  return {JobIdText(job),         Text(job, "user"),  Text(job, "state"),
          ElapsedText(job, now),  Text(job, "queue"), Text(job, "tasks"),
          HostsText(job),         Text(job, "exit_code"), Text(job, "name"),
          TimeText(job, "submit_time")};
}

// One `-o` field of a job: its id as written, hosts, times and the elapsed time readable.
std::string FieldText(const json& job, const std::string& field, int64_t now) {
  if (field == "id") return JobIdText(job);
  if (field == "elapsed") return ElapsedText(job, now);
  if (field == "hosts") return HostsText(job);
  if (field.ends_with("_time") || field == "estimated_start") return TimeText(job, field.c_str());
  return Text(job, field.c_str());
}

// The core renders times as `t=<seconds>`; epoch times read better as local clock times.
std::string LocalTimes(std::string line) {
  size_t at = 0;
  while ((at = line.find("t=", at)) != std::string::npos) {
    size_t end = at + 2;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
    if (end - at - 2 >= 9) {  // an epoch time, not a small trace time
      const json stamp = {{"t", std::stoll(line.substr(at + 2, end - at - 2))}};
      const std::string text = TimeText(stamp, "t");
      line.replace(at, end - at, text);
      at += text.size();
    } else {
      at = end;
    }
  }
  return line;
}

// " Expected to start around 14:05" (R-UX-8), or why the start is unknown; "" when the
// job object has no estimate.
std::string EstimateLine(const json& job) {
  auto it = job.find("estimated_start");
  if (it == job.end()) return "";
  if (it->is_number_integer()) {
    const std::time_t t = it->get<int64_t>();
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    std::tm today{};
    localtime_r(&t, &tm);
    localtime_r(&now, &today);
    const bool same_day = tm.tm_year == today.tm_year && tm.tm_yday == today.tm_yday;
    char buffer[32];
    std::strftime(buffer, sizeof buffer, same_day ? "%H:%M" : "%b %d %H:%M", &tm);
    return std::string(" Expected to start around ") + buffer + "\n";
  }
  auto why = job.find("unknown_because");
  if (why == job.end() || !why->is_string()) return "";
  return " Start time unknown: " + why->get<std::string>() + "\n";
}

std::string ReasonLines(const json& job) {
  std::string out;
  const json* reasons = nullptr;
  if (auto it = job.find("reasons"); it != job.end() && it->is_object()) reasons = &*it;
  if (reasons != nullptr) {
    if (auto details = reasons->find("details"); details != reasons->end() && details->is_array()) {
      for (const json& detail : *details) {
        std::optional<core::ReasonDetail> parsed = wire::ReasonDetailFromJson(detail);
        out += " " + LocalTimes(parsed ? core::RenderReason(*parsed) : detail.dump()) + "\n";
      }
    }
  }
  if (out.empty()) {
    const std::string code = Text(job, "reason");
    std::optional<core::ReasonCode> parsed = wire::ReasonCodeFromString(code);
    out = " " + (parsed ? std::string(core::Headline(*parsed)) : code) + "\n";
  }
  // The same words as the simulator's report (core::RenderPendingJob).
  if (reasons != nullptr) {
    if (auto hint = reasons->find("hint"); hint != reasons->end() && hint->is_string()) {
      out += " What would let it start: " + LocalTimes(hint->get<std::string>()) + "\n";
    }
  }
  return out + EstimateLine(job);
}

}  // namespace

std::vector<size_t> ColumnWidths(const Row& header, const std::vector<Row>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  for (size_t i = 0; i < header.size(); ++i) widths[i] = header[i].size();
  for (const Row& row : rows) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  return widths;
}

std::string TableLine(const Row& row, const std::vector<size_t>& widths) {
  std::string out;
  for (size_t i = 0; i < row.size(); ++i) {
    out += row[i];
    if (i + 1 == row.size()) break;
    const size_t width = i < widths.size() ? widths[i] : 0;
    out += std::string(width > row[i].size() ? width - row[i].size() + 2 : 2, ' ');
  }
  return out + "\n";
}

const Row& JobTableHeader() { return kJobHeader; }
Row JobTableRow(const json& job, int64_t now) { return JobRow(job, now); }
std::string JobFieldCell(const json& job, const std::string& field, int64_t now) {
  return FieldText(job, field, now);
}
std::string PendingReasonText(const json& job) { return ReasonLines(job); }

std::string ExitNote(const json& job) {
  if (Text(job, "state") != "EXIT" || Text(job, "message") == "-") return "";
  return "Job " + JobIdText(job) + " " + Text(job, "cause") + ": " + Text(job, "message") + "\n";
}

std::string ElapsedText(const json& job, int64_t now) {
  const json start = job.value("start_time", json());
  if (!start.is_number_integer() || start.get<int64_t>() <= 0) return "-";
  const json end = job.value("end_time", json());
  const int64_t until = end.is_number_integer() && end.get<int64_t>() > 0 ? end.get<int64_t>() : now;
  const int64_t seconds = std::max<int64_t>(0, until - start.get<int64_t>());
  const int64_t days = seconds / 86400, hours = seconds / 3600 % 24;
  const int64_t minutes = seconds / 60 % 60, secs = seconds % 60;
  char buffer[48];
  if (days > 0) {
    std::snprintf(buffer, sizeof buffer, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(hours), static_cast<long long>(minutes),
                  static_cast<long long>(secs));
  } else if (hours > 0) {
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", static_cast<long long>(hours),
                  static_cast<long long>(minutes), static_cast<long long>(secs));
  } else {
    std::snprintf(buffer, sizeof buffer, "%lld:%02lld", static_cast<long long>(minutes),
                  static_cast<long long>(secs));
  }
  return buffer;
}

std::string FormatJobs(const json& jobs, int64_t now) {
  std::vector<Row> rows;
  if (jobs.is_array()) {
    for (const json& job : jobs) rows.push_back(JobRow(job, now));
  }
  if (rows.empty()) return "No jobs found\n";
  std::string notes;
  for (const json& job : jobs) notes += ExitNote(job);
  return FormatTable(kJobHeader, rows) + notes;
}

std::string FormatJobFields(const json& jobs, const std::vector<std::string>& fields,
                            int64_t now) {
  Row header;
  for (const std::string& field : fields) {
    std::string name = field;
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    header.push_back(name);
  }
  std::vector<Row> rows;
  for (const json& job : jobs.is_array() ? jobs : json::array()) {
    Row row;
    for (const std::string& field : fields) row.push_back(FieldText(job, field, now));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return "No jobs found\n";
  return FormatTable(header, rows);
}

std::string FormatPendingJobs(const json& jobs, int64_t now) {
  std::vector<Row> rows;
  std::vector<std::string> reasons;
  if (jobs.is_array()) {
    for (const json& job : jobs) {
      const std::string state = Text(job, "state");
      if (state != "PENDING" && state != "HELD") continue;
      rows.push_back(JobRow(job, now));
      reasons.push_back(ReasonLines(job));
    }
  }
  if (rows.empty()) return "No pending jobs found\n";
  // One aligned table; each job's row is followed by its reasons (bjobs -p layout).
  const std::string table = FormatTable(kJobHeader, rows);
  std::string out;
  size_t line_start = 0;
  for (size_t line = 0; line_start < table.size(); ++line) {
    const size_t end = table.find('\n', line_start);
    out += table.substr(line_start, end - line_start + 1);
    if (line > 0) out += " PENDING REASONS:\n" + reasons[line - 1];
    line_start = end + 1;
  }
  return out;
}

std::string FormatHosts(const json& hosts) {
  std::vector<Row> rows;
  std::string notes;  // why the controller closed a host (bhosts -l's "closed" reason)
  bool any_reserved = false;
  if (hosts.is_array()) {
    for (const json& host : hosts) {
      if (Text(host, "reason") != "-") {
        notes += "Host " + Text(host, "name") + " closed: " + Text(host, "reason") + "\n";
      }
      std::string agent = "-";
      if (auto it = host.find("agent"); it != host.end() && it->is_object()) {
        agent = Text(*it, "connected") == "yes" ? "connected" : "disconnected";
        if (Text(*it, "restarting") == "yes") agent = "restarting";  // issue 43
      }
      std::string resources;
      if (auto it = host.find("resources"); it != host.end() && it->is_object()) {
        for (const auto& [key, value] : it->items()) {
          resources += (resources.empty() ? "" : ",") + key + "=" + Text(*it, key.c_str());
        }
      }
      const std::string reserved = HostReservationsText(host);
      any_reserved = any_reserved || !reserved.empty();
      rows.push_back({Text(host, "name"), Text(host, "state"), Text(host, "slots"),
                      Text(host, "used_slots"), Text(host, "running_jobs"), agent,
                      resources.empty() ? "-" : resources, reserved.empty() ? "-" : reserved});
    }
  }
  if (rows.empty()) return "No hosts\n";
  Row header = {"HOST", "STATE", "SLOTS", "USED", "JOBS", "AGENT", "RESOURCES", "RESERVATION"};
  // The reservations column (R-RSV-1) only when a host has one: the table stays as it was.
  if (!any_reserved) {
    header.pop_back();
    for (Row& row : rows) row.pop_back();
  }
  return FormatTable(header, rows) + notes;
}

std::string FormatQueues(const json& queues) {
  std::vector<Row> rows;
  if (queues.is_array()) {
    for (const json& queue : queues) {
      const std::string status = std::string(Text(queue, "open") == "yes" ? "Open" : "Closed") +
                                 ":" + (Text(queue, "active") == "yes" ? "Active" : "Inact");
      rows.push_back({Text(queue, "name"), Text(queue, "priority"), Text(queue, "policy"), status,
                      Text(queue, "pending"), Text(queue, "held"), Text(queue, "running"),
                      Text(queue, "used_slots")});
    }
  }
  if (rows.empty()) return "No queues\n";
  return FormatTable({"QUEUE", "PRIO", "POLICY", "STATUS", "PEND", "HELD", "RUN", "SLOTS"}, rows);
}

std::string FormatLimits(const json& limits) {
  std::vector<Row> rows;
  if (limits.is_array()) {
    for (const json& limit : limits) {
      std::string scope;
      for (const char* key : {"users", "queues", "hosts", "projects"}) {
        auto it = limit.find(key);
        if (it == limit.end() || !it->is_object()) continue;
        std::string names;
        if (auto list = it->find("names"); list != it->end() && list->is_array()) {
          for (const json& name : *list) {
            names += (names.empty() ? "" : ",") +
                     (name.is_string() ? name.get<std::string>() : name.dump());
          }
        }
        const bool each = Text(*it, "per_each") == "yes";
        scope += (scope.empty() ? "" : " ") + std::string(each ? "per_" : "") + key + "=" +
                 (names.empty() ? "all" : names);
      }
      std::string resources;
      if (auto it = limit.find("resources"); it != limit.end() && it->is_object()) {
        for (const auto& [key, value] : it->items()) {
          resources += (resources.empty() ? "" : ",") + key + "=" + Text(*it, key.c_str());
        }
      }
      rows.push_back({Text(limit, "name"), Text(limit, "slots"), Text(limit, "jobs"),
                      resources.empty() ? "-" : resources, scope.empty() ? "-" : scope});
    }
  }
  if (rows.empty()) return "No limits\n";
  return FormatTable({"LIMIT", "SLOTS", "JOBS", "RESOURCES", "SCOPE"}, rows);
}

}  // namespace sluice::client
