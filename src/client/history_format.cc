#include "client/history_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/array_ids.h"
#include "client/printable.h"
#include "client/text_fields.h"
#include "client/submit_request.h"

namespace sluice::client {
namespace {

using wire::HistoryEntry;
using Row = std::vector<std::string>;

std::string IsoTime(int64_t t) { return t <= 0 ? "" : LocalIsoTime(t); }

std::string Number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

std::string HostsText(const HistoryEntry& e) {
  std::string text;
  for (const auto& [host, slots] : e.hosts) {
    if (!text.empty()) text += ',';
    text += host + ":" + std::to_string(slots);
  }
  return text;
}

Row Fields(const HistoryEntry& e) {
  return Row{FormatJobId(e.id),
             e.name,
             e.user,
             e.queue,
             e.state,
             e.exit_code ? std::to_string(*e.exit_code) : "",
             e.cause,
             IsoTime(e.submit_time),
             IsoTime(e.start_time),
             IsoTime(e.end_time),
             std::to_string(e.WaitSeconds()),
             std::to_string(e.RunSeconds()),
             std::to_string(e.slots),
             HostsText(e),
             e.cpu_seconds ? Number(*e.cpu_seconds) : "",
             e.max_rss_mb ? std::to_string(*e.max_rss_mb) : "",
             e.message};
}

// A step's record under its job (R-LAUNCH-2), in the job's columns as sacct lists a step
// under its job: id `ID.N`; name the step's command (sacct's step JobName); the job's user and
// queue (a reader that keeps one user's rows keeps their steps); the step's state, exit code,
// start, end, run time (none while it runs), host, cpu time and peak memory (whole MB, as the
// job's); message "killed by signal N" when it was. Empty: what a step does not have (cause,
// submit time, wait, slots).
Row StepFields(const HistoryEntry& job, const wire::StepRecord& s) {
  const bool ended = s.end_time > 0;
  return Row{FormatJobId(job.id) + "." + std::to_string(s.step),
             s.command,
             job.user,
             job.queue,
             s.state,
             s.exit_code ? std::to_string(*s.exit_code) : "",
             "",
             "",
             IsoTime(s.start_time),
             IsoTime(s.end_time),
             "",
             ended ? std::to_string(std::max<int64_t>(0, s.end_time - s.start_time)) : "",
             "",
             s.host,
             s.cpu_seconds ? Number(*s.cpu_seconds) : "",
             s.max_rss_mb ? std::to_string(std::llround(*s.max_rss_mb)) : "",
             s.signal ? "killed by signal " + std::to_string(*s.signal) : ""};
}

// The job's row, then one row per step.
std::vector<Row> JobRows(const HistoryEntry& e) {
  std::vector<Row> rows = {Fields(e)};
  for (const wire::StepRecord& s : e.steps) rows.push_back(StepFields(e, s));
  return rows;
}

std::string CsvField(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Aligned(const std::vector<Row>& rows) {
  std::vector<size_t> width;
  for (const Row& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const Row& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

const std::vector<std::string>& HistoryColumns() {
  static const std::vector<std::string> kColumns = {
      "id",    "name",   "user",        "queue",      "state",        "exit_code",
      "cause", "submit", "start",       "end",        "wait_seconds", "run_seconds",
      "slots", "hosts",  "cpu_seconds", "max_rss_mb", "message"};
  return kColumns;
}

std::string FormatHistoryTable(const std::vector<HistoryEntry>& entries) {
  std::vector<Row> rows = {{"ID", "USER", "QUEUE", "STATE", "EXIT", "CAUSE", "SUBMIT", "START",
                            "END", "WAIT", "RUN", "SLOTS", "HOSTS", "CPU_S", "MAXRSS_MB"}};
  // GPU seconds only where some job held GPUs (R-GPU-4): other sites' tables stay as they were.
  const bool gpus = std::any_of(entries.begin(), entries.end(),
                                [](const HistoryEntry& e) { return e.gpus > 0; });
  if (gpus) rows[0].push_back("GPU_S");
  const auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  for (const HistoryEntry& e : entries) {
    bool job_row = true;
    for (Row f : JobRows(e)) {
      f.pop_back();            // the message too
      f.erase(f.begin() + 1);  // the name (a step's command) is in the CSV and JSON only
      if (gpus) f.push_back(job_row && e.gpus > 0 ? std::to_string(e.GpuSeconds()) : "");
      job_row = false;
      for (std::string& field : f) field = dash(PrintableField(field));
      rows.push_back(std::move(f));
    }
  }
  return Aligned(rows);
}

std::string FormatHistoryCsv(const std::vector<HistoryEntry>& entries) {
  std::string out;
  const auto line = [&out](const Row& row) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out += ',';
      out += CsvField(row[i]);
    }
    out += "\r\n";
  };
  line(HistoryColumns());
  for (const HistoryEntry& e : entries) {
    for (const Row& row : JobRows(e)) line(row);
  }
  return out;
}

std::string FormatHistorySummary(const nlohmann::json& summary) {
  std::string out;
  // GPU hours only on a cluster whose jobs held GPUs (R-GPU-4).
  const bool gpu_hours = summary.is_object() && summary.contains("total") &&
                         summary["total"].is_object() &&
                         summary["total"].value("gpu_hours", 0.0) > 0;
  const auto table = [&](const char* title, const char* key, const nlohmann::json& rows) {
    std::vector<Row> lines = {{title, "JOBS", "SLOT_HOURS", "CPU_HOURS", "AVG_WAIT_S"}};
    if (gpu_hours) lines[0].push_back("GPU_HOURS");
    for (const nlohmann::json& r : rows) {
      const nlohmann::json& cpu = r["cpu_hours"];
      lines.push_back(
          {key == nullptr ? "(all)" : r.value(key, ""), std::to_string(r.value("jobs", int64_t{0})),
           Number(r.value("slot_hours", 0.0)), cpu.is_number() ? Number(cpu.get<double>()) : "-",
           Number(r.value("average_wait_seconds", 0.0))});
      if (gpu_hours) lines.back().push_back(Number(r.value("gpu_hours", 0.0)));
    }
    out += Aligned(lines);
  };
  if (!summary.is_object()) return out;
  table("USER", "user", summary.value("users", nlohmann::json::array()));
  out += "\n";
  table("QUEUE", "queue", summary.value("queues", nlohmann::json::array()));
  out += "\n";
  table("TOTAL", nullptr, nlohmann::json::array({summary.value("total", nlohmann::json())}));
  return out;
}

namespace {

// "h1:2, h2:4" from [[name, slots]...].
std::string TimelineHosts(const nlohmann::json& hosts) {
  std::string text;
  if (!hosts.is_array()) return text;
  for (const nlohmann::json& h : hosts) {
    if (!h.is_array() || h.size() != 2 || !h[0].is_string()) continue;
    text += (text.empty() ? "" : ", ") + h[0].get<std::string>() + ":" + h[1].dump();
  }
  return text;
}

std::string TimelineLine(const nlohmann::json& e) {
  const std::string event = e.value("event", "");
  const std::string by = e.contains("by") ? " by " + e.value("by", "") : "";
  if (event == "submit") return "submitted";
  if (event == "start") return "started on " + TimelineHosts(e.value("hosts", nlohmann::json()));
  if (event == "requeue") return "requeued: " + e.value("why", "");
  if (event == "modify") return "modified" + by + ": " + e.value("changes", "");
  if (event == "hold") return "held" + by;
  if (event == "release") return "released" + by;
  if (event == "cancel") return "cancel requested" + by;
  if (event == "end") {
    std::string text = "ended " + e.value("state", "");
    if (e.contains("exit_code") && e["exit_code"].is_number()) {
      text += " (exit " + e["exit_code"].dump() + ")";
    }
    if (!e.value("cause", "").empty()) text += ", " + e.value("cause", "");
    return text;
  }
  return event + by;
}

}  // namespace

std::string FormatJobTimeline(const nlohmann::json& history) {
  if (!history.is_object()) return "";
  const nlohmann::json& runs = history.value("runs", nlohmann::json::array());
  std::string out = "Job " + FormatJobId(history.value("id", JobId{0}));
  if (!runs.empty() && runs.back().is_object()) {
    const nlohmann::json& last = runs.back();
    if (!last.value("name", "").empty()) out += " <" + last.value("name", "") + ">";
    out += ", user " + last.value("user", "") + ", queue " + last.value("queue", "");
  }
  out += "\n";
  for (const nlohmann::json& e : history.value("timeline", nlohmann::json::array())) {
    if (!e.is_object()) continue;
    out += "  " + LocalIsoTime(e.value("time", int64_t{0})) + "  " +
           PrintableField(TimelineLine(e)) + "\n";
  }
  int64_t waited = 0;
  int64_t ran = 0;
  for (const nlohmann::json& run : runs) {
    waited += run.value("wait_seconds", int64_t{0});
    ran += run.value("run_seconds", int64_t{0});
  }
  out += "  " + std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") +
         "; waited " + std::to_string(waited) + " s, ran " + std::to_string(ran) + " s in all\n";
  return out;
}

Result<int64_t> ParseHistoryTime(const std::string& flag, const std::string& text, int64_t now) {
  const auto bad = [&] {
    return InvalidArgument(flag + " " + text +
                           ": expected epoch seconds, -DURATION (90s, 30m, 12h, 7d ago) or "
                           "YYYY-MM-DD[THH:MM[:SS]]");
  };
  if (text.size() >= 2 && text.front() == '-') {
    int64_t n = 0;
    const char* begin = text.data() + 1;
    const char* end = text.data() + text.size() - 1;
    auto [ptr, ec] = std::from_chars(begin, end, n);
    const char unit = text.back();
    const int64_t scale = unit == 's'   ? 1
                          : unit == 'm' ? 60
                          : unit == 'h' ? 3600
                          : unit == 'd' ? 86400
                                        : 0;
    if (ec != std::errc() || ptr != end || scale == 0 || n < 0) return bad();
    return now - n * scale;
  }
  if (text.size() == 5 && text[2] == ':') return bad();  // HH:MM means a future time for -b
  if (text.empty() || text.front() == '+') return bad();
  Result<int64_t> t = ParseBeginTime(text, now);
  if (!t) return bad();
  return *t;
}

}  // namespace sluice::client
