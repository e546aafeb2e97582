#include "server/job_text.h"

#include <cstdio>

#include "server/job_spec.h"
#include "sim/pending_report.h"

namespace sluice::server {

using nlohmann::json;

namespace {

void AppendInt(int64_t value, std::string& out) { out += std::to_string(value); }

void AppendKey(const char* key, std::string& out) {
  out += '"';
  out += key;
  out += "\":";
}

void AppendTimeOrNull(int64_t t, std::string& out) {
  if (t == 0) {
    out += "null";
  } else {
    AppendInt(t, out);
  }
}

}  // namespace

void AppendJsonString(std::string_view text, std::string& out) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += c;  // UTF-8 passes through (every stored string came from parsed JSON)
        }
    }
  }
  out += '"';
}

std::shared_ptr<const std::string> FixedJobText(const json& spec) {
  const json fixed = {{"name", spec.value("name", "")},
                      {"min_tasks", spec.value("min_tasks", 1)},
                      {"max_tasks", spec.value("max_tasks", 1)},
                      {"resreq", spec.value("resreq", "")},
                      {"run_limit", spec.value("run_limit", json(nullptr))},
                      {"priority", spec.value("priority", 0)},
                      {"project", spec.value("project", "")},
                      {"exclusive", spec.value("exclusive", false)},
                      {"depend", spec.value("depend", "")},
                      {"begin", spec.value("begin", json(nullptr))},
                      {"command", CommandText(spec.value("command", json(""))) },
                      {"cwd", spec.value("cwd", "")},
                      {"output", spec.value("output", "")},
                      {"error", spec.value("error", "")}};
  std::string text = fixed.dump(-1, ' ', false, json::error_handler_t::replace);
  // Without the braces: the members are spliced into each listing's object.
  return std::make_shared<const std::string>(text.substr(1, text.size() - 2));
}

json ReasonsJson(const std::optional<core::PendingReasons>& reasons, const std::string& reason) {
  if (!reasons) return {{"main", reason}, {"details", json::array()}};
  json details = json::array();
  for (const core::ReasonDetail& d : reasons->details) {
    details.push_back(json(sim::ReasonDetailToJson(d)));
  }
  return {{"main", core::ToString(reasons->main)}, {"details", details}};
}

void AppendJobText(const JobListEntry& e, std::string& out) {
  out += '{';
  if (e.fixed && !e.fixed->empty()) {
    out += *e.fixed;
    out += ',';
  }
  AppendKey("id", out);
  AppendInt(e.id, out);
  out += ',';
  AppendKey("user", out);
  AppendJsonString(e.user, out);
  out += ',';
  AppendKey("queue", out);
  AppendJsonString(e.queue, out);
  out += ',';
  AppendKey("state", out);
  AppendJsonString(e.state, out);
  out += ',';
  AppendKey("submit_time", out);
  AppendInt(e.submit_time, out);
  out += ',';
  AppendKey("start_time", out);
  AppendTimeOrNull(e.start_time, out);
  out += ',';
  AppendKey("end_time", out);
  AppendTimeOrNull(e.end_time, out);
  out += ',';
  AppendKey("exit_code", out);
  if (e.exit_code) {
    AppendInt(*e.exit_code, out);
  } else {
    out += "null";
  }
  out += ',';
  AppendKey("cause", out);
  if (e.cause.empty()) {
    out += "null";
  } else {
    AppendJsonString(e.cause, out);
  }
  out += ',';
  AppendKey("reason", out);
  if (e.reason.empty()) {
    out += "null";
  } else {
    AppendJsonString(e.reason, out);
  }
  out += ',';
  AppendKey("tasks", out);
  AppendInt(e.tasks, out);
  out += ',';
  AppendKey("hosts", out);
  out += '[';
  for (size_t i = 0; i < e.hosts.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"name\":";
    AppendJsonString(e.hosts[i].first, out);
    out += ",\"slots\":";
    AppendInt(e.hosts[i].second, out);
    out += '}';
  }
  out += "],";
  AppendKey("dispatch_attempts", out);
  AppendInt(e.dispatch_attempts, out);
  if (!e.message.empty()) {
    out += ',';
    AppendKey("message", out);
    AppendJsonString(e.message, out);
  }
  if (e.with_reasons) {
    out += ',';
    AppendKey("reasons", out);
    if (e.reason.empty()) {
      out += "null";
    } else {
      out += "{\"main\":";
      AppendJsonString(e.reasons ? core::ToString(e.reasons->main) : e.reason, out);
      out += ",\"details\":[";
      if (e.reasons) {
        bool first = true;
        for (const core::ReasonDetail& d : e.reasons->details) {
          if (!first) out += ',';
          first = false;
          out += sim::ReasonDetailToJson(d).dump();
        }
      }
      out += "]}";
    }
  }
  out += '}';
}

}  // namespace sluice::server
