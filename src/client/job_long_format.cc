#include "client/job_long_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "base/array_ids.h"
#include "client/printable.h"
#include "client/text_fields.h"
#include "core/explain/render.h"
#include "wire/output_pattern.h"
#include "wire/reasons_json.h"
#include "wire/step_record.h"

namespace sluice::client {
namespace {

using nlohmann::json;

constexpr size_t kLabelWidth = 20;

std::string Scalar(const json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>().empty() ? "-" : value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  return value.dump();
}

std::string Member(const json& job, const char* key) {
  auto it = job.find(key);
  return it == job.end() ? "-" : Scalar(*it);
}

std::string Clock(int64_t t) {
  const std::time_t time = t;
  std::tm tm{};
  localtime_r(&time, &tm);
  char buffer[40];
  std::strftime(buffer, sizeof buffer, "%a %b %d %H:%M:%S %Y", &tm);
  return buffer;
}

std::string TimeMember(const json& job, const char* key) {
  auto it = job.find(key);
  if (it == job.end() || !it->is_number()) return "-";
  return Clock(it->get<int64_t>());
}

// 5400 -> "1:30:00 (5400 s)".
std::string Duration(const json& seconds) {
  if (!seconds.is_number()) return "-";
  const int64_t s = seconds.get<int64_t>();
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld (%lld s)",
                static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60),
                static_cast<long long>(s % 60), static_cast<long long>(s));
  return buffer;
}

void Line(std::string_view label, const std::string& value, std::string& out) {
  out += "  ";
  out += label;
  out += ':';
  out += std::string(label.size() + 1 < kLabelWidth ? kLabelWidth - label.size() - 1 : 1, ' ');
  out += PrintableField(value);
  out += '\n';
}

// When the job entered its state: end, start or submission.
// An output or error file as the agent opens it: the job's `%j`/`%a` patterns expanded (a
// default output, sluice-%j.out, is then the file the user looks for; issue 47).
std::string FileName(const json& job, const char* key) {
  const std::string pattern = Member(job, key);
  if (pattern.find('%') == std::string::npos || !job.value("id", json()).is_number_integer()) {
    return pattern;
  }
  JobId id = job["id"].get<JobId>();
  if (job.contains("index") && job["index"].is_number_integer()) {
    const int64_t index = job["index"].get<int64_t>();
    if (index < 0 || index > kMaxArrayIndex) return pattern;
    id = ArrayElementId(id, static_cast<int32_t>(index));
  }
  return wire::ExpandOutputPattern(pattern, id);
}

std::string StateText(const json& job) {
  const std::string state = Member(job, "state");
  // A requeued job waits since its requeue (issue 47.6), not since its submission.
  const char* since = job.contains("queued_time") ? "queued_time" : "submit_time";
  if (state == "RUNNING" || state == "ADMITTING") since = "start_time";
  if (state == "DONE" || state == "EXIT" || state == "CANCELLED") since = "end_time";
  const std::string when = TimeMember(job, since);
  std::string text = when == "-" ? state : state + " since " + when;
  if (job.contains("requeues") && job["requeues"].is_number_integer()) {
    const int64_t n = job["requeues"].get<int64_t>();
    text += " (requeued " + std::to_string(n) + (n == 1 ? " time)" : " times)");
  }
  return text;
}

std::string HostsText(const json& job) {
  auto it = job.find("hosts");
  if (it == job.end() || !it->is_array() || it->empty()) return "-";
  std::string out;
  for (const json& host : *it) {
    if (!out.empty()) out += " ";
    out += host.is_object() ? Member(host, "name") + ":" + Member(host, "slots") : Scalar(host);
  }
  return out;
}

std::string TasksText(const json& job) {
  std::string text = Member(job, "tasks");
  const std::string min = Member(job, "min_tasks");
  const std::string max = Member(job, "max_tasks");
  if (min != "-" && max != "-")
    text += min == max ? " (asked " + min + ")" : " (asked " + min + "-" + max + ")";
  return text;
}

std::string CpuText(const json& job) {
  auto it = job.find("cpu_seconds");
  if (it == job.end() || !it->is_number()) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", it->get<double>());
  return buffer;
}

std::string MemoryText(const json& job) {
  auto it = job.find("max_rss_mb");
  if (it == job.end() || !it->is_number()) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.0f MB", std::round(it->get<double>()));
  return buffer;
}

std::string EstimateText(const json& job) {
  auto it = job.find("estimated_start");
  if (it == job.end()) return "-";
  if (it->is_number()) {
    const std::string from = Member(job, "estimated_from");
    return Clock(it->get<int64_t>()) + (from == "-" ? "" : " (from " + from + ")");
  }
  const std::string why = Member(job, "unknown_because");
  return why == "-" ? "unknown" : "unknown (" + why + ")";
}

// The core renders times as `t=<seconds>`; epoch times read better as clock times.
std::string LocalTimes(std::string line) {
  size_t at = 0;
  while ((at = line.find("t=", at)) != std::string::npos) {
    size_t end = at + 2;
    while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
    if (end - at - 2 >= 9) {
      const std::string text = Clock(std::stoll(line.substr(at + 2, end - at - 2)));
      line.replace(at, end - at, text);
      at += text.size();
    } else {
      at = end;
    }
  }
  return line;
}

// "h1: room for 4", "h2: NO_RESOURCE mem (needs 512, has 256)", "h3: HOST_CLOSED", and with
// the host's reason "h4: HOST_CLOSED (health check: ERROR: nhc: ...)".
std::string HostVerdictText(const json& host) {
  if (!host.is_object()) return Scalar(host);
  std::string text = Member(host, "host") + ": ";
  if (host.contains("room")) return text + "room for " + Member(host, "room");
  text += Member(host, "code");
  if (host.contains("resource")) text += " " + Member(host, "resource");
  if (host.contains("needed")) {
    text += " (needs " + Member(host, "needed") + ", has " + Member(host, "available") + ")";
  }
  if (host.contains("reason")) text += " (" + Member(host, "reason") + ")";
  return text;
}

// Pending reasons, their per-host detail and the hint; nothing for a job that is not waiting.
void ReasonLines(const json& job, std::string& out) {
  auto reasons = job.find("reasons");
  const std::string code = Member(job, "reason");
  if ((reasons == job.end() || !reasons->is_object()) && code == "-") return;
  out += "  Pending reasons:\n";
  bool any = false;
  if (reasons != job.end() && reasons->is_object()) {
    if (auto details = reasons->find("details"); details != reasons->end() && details->is_array()) {
      for (const json& detail : *details) {
        std::optional<core::ReasonDetail> parsed = wire::ReasonDetailFromJson(detail);
        out += "    " + LocalTimes(parsed ? core::RenderReason(*parsed) : detail.dump()) + "\n";
        any = true;
      }
    }
    if (auto hosts = reasons->find("hosts"); hosts != reasons->end() && hosts->is_array()) {
      out += "    Per host:\n";
      for (const json& host : *hosts) out += "      " + HostVerdictText(host) + "\n";
    }
  }
  if (!any) {
    std::optional<core::ReasonCode> parsed = wire::ReasonCodeFromString(code);
    out += "    " + (parsed ? std::string(core::Headline(*parsed)) : code) + "\n";
  }
  if (reasons != job.end() && reasons->is_object()) {
    if (auto hint = reasons->find("hint"); hint != reasons->end() && hint->is_string()) {
      out += "  What would let it start: " + LocalTimes(hint->get<std::string>()) + "\n";
    }
  }
}

// The job's steps (R-LAUNCH-2), one line each under a header, columns aligned as sacct's:
//   STEP  HOST  STATE  EXIT  START  END  CPU  MAXRSS  COMMAND
// Nothing for a job without steps; one line saying why when the member does not decode (an
// error is shown rather than steps silently dropped).
void StepLines(const json& job, std::string& out) {
  auto it = job.find("steps");
  if (it == job.end() || it->is_null() || (it->is_array() && it->empty())) return;
  Result<std::vector<wire::StepRecord>> steps = wire::DecodeStepsJson(*it);
  if (!steps) {
    Line("Steps", "unreadable (" + steps.error().message() + ")", out);
    return;
  }
  // The job as its header names it: `12`, or `12[3]` for an array's element.
  std::string id = Member(job, "id");
  if (job.contains("index") && job["index"].is_number()) id += "[" + job["index"].dump() + "]";
  const auto time = [](int64_t t) { return t <= 0 ? std::string("-") : LocalIsoTime(t); };
  const auto number = [](const std::optional<double>& value, const char* format) {
    if (!value) return std::string("-");
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, format, *value);
    return std::string(buffer);
  };
  std::vector<std::vector<std::string>> rows = {
      {"STEP", "HOST", "STATE", "EXIT", "START", "END", "CPU", "MAXRSS", "COMMAND"}};
  for (const wire::StepRecord& s : *steps) {
    std::string exit = s.exit_code ? std::to_string(*s.exit_code) : "-";
    if (s.signal) exit += " (signal " + std::to_string(*s.signal) + ")";
    std::vector<std::string> row = {id + "." + std::to_string(s.step),
                                    s.host,
                                    s.state,
                                    exit,
                                    time(s.start_time),
                                    time(s.end_time),
                                    number(s.cpu_seconds, "%.2fs"),
                                    number(s.max_rss_mb, "%.1fMB"),
                                    s.command};
    for (std::string& field : row) field = field.empty() ? "-" : PrintableField(field);
    rows.push_back(std::move(row));
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  out += "  Steps:\n";
  for (const auto& row : rows) {
    std::string line = "    ";
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
}

void AdmissionLines(const json& job, std::string& out) {
  auto admission = job.find("admission");
  if (admission == job.end() || !admission->is_object()) return;
  out += "  Admission:\n";
  for (const auto& [key, value] : admission->items()) {
    std::string text = Scalar(value);
    if ((key == "first_blocked" || key == "gate_since") && value.is_number()) {
      text = Clock(value.get<int64_t>());
    }
    Line("  " + key, text, out);
  }
}

// The members printed by name above; every other member goes to the end as it is.
const std::set<std::string, std::less<>>& KnownMembers() {
  static const std::set<std::string, std::less<>> kKnown = {"id",
                                                            "index",
                                                            "name",
                                                            "user",
                                                            "queue",
                                                            "project",
                                                            "reservation",
                                                            "state",
                                                            "command",
                                                            "script_bytes",
                                                            "cwd",
                                                            "output",
                                                            "error",
                                                            "tasks",
                                                            "min_tasks",
                                                            "max_tasks",
                                                            "resreq",
                                                            "run_limit",
                                                            "exclusive",
                                                            "priority",
                                                            "depend",
                                                            "begin",
                                                            "hosts",
                                                            "submit_time",
                                                            "start_time",
                                                            "end_time",
                                                            "exit_code",
                                                            "cause",
                                                            "message",
                                                            "dispatch_attempts",
                                                            "estimated_start",
                                                            "estimated_from",
                                                            "unknown_because",
                                                            "cpu_seconds",
                                                            "max_rss_mb",
                                                            "reason",
                                                            "reasons",
                                                            "admission",
                                                            "steps"};
  return kKnown;
}

}  // namespace

std::string FormatJobLong(const json& job) {
  if (!job.is_object()) return "-\n";
  std::string out = "Job " + Member(job, "id");
  if (job.contains("index") && job["index"].is_number()) out += "[" + job["index"].dump() + "]";
  out += "\n";
  Line("Name", Member(job, "name"), out);
  Line("User", Member(job, "user"), out);
  Line("Queue", Member(job, "queue"), out);
  Line("Project", Member(job, "project"), out);
  // `-U NAME` (R-RSV-2): only for a job in a reservation.
  if (job.contains("reservation") && job["reservation"].is_string() &&
      !job["reservation"].get_ref<const std::string&>().empty()) {
    Line("Reservation", Member(job, "reservation"), out);
  }
  Line("State", StateText(job), out);
  std::string command = Member(job, "command");
  if (job.contains("script_bytes"))
    command += " (script, " + Member(job, "script_bytes") + " bytes stored)";
  Line("Command", command, out);
  Line("Working directory", Member(job, "cwd"), out);
  Line("Output", FileName(job, "output"), out);
  Line("Error", FileName(job, "error"), out);
  Line("Tasks", TasksText(job), out);
  Line("Resource request", Member(job, "resreq"), out);
  Line("Run limit", Duration(job.value("run_limit", json())), out);
  Line("Exclusive", Member(job, "exclusive"), out);
  Line("Priority", Member(job, "priority"), out);
  Line("Dependency", Member(job, "depend"), out);
  Line("Begin", TimeMember(job, "begin"), out);
  Line("Hosts", HostsText(job), out);
  Line("Submitted", TimeMember(job, "submit_time"), out);
  Line("Started", TimeMember(job, "start_time"), out);
  Line("Ended", TimeMember(job, "end_time"), out);
  Line("Exit code", Member(job, "exit_code"), out);
  Line("Cause", Member(job, "cause"), out);
  Line("Message", Member(job, "message"), out);
  Line("Dispatch attempts", Member(job, "dispatch_attempts"), out);
  Line("Estimated start", EstimateText(job), out);
  Line("CPU time", CpuText(job), out);
  Line("Peak memory", MemoryText(job), out);
  for (const auto& [key, value] : job.items()) {
    if (!KnownMembers().contains(key))
      Line(key, value.is_structured() ? value.dump() : Scalar(value), out);
  }
  StepLines(job, out);
  ReasonLines(job, out);
  AdmissionLines(job, out);
  return out;
}

std::string FormatJobsLong(const json& jobs) {
  if (!jobs.is_array() || jobs.empty()) return "No jobs found\n";
  std::string out;
  for (const json& job : jobs) {
    if (!out.empty()) out += "\n";
    out += FormatJobLong(job);
  }
  return out;
}

}  // namespace sluice::client
