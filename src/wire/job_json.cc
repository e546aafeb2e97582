#include "wire/job_json.h"

#include "base/array_ids.h"
#include "wire/estimate_json.h"
#include "wire/reasons_json.h"
#include "wire/step_record.h"

namespace sluice::wire {

using nlohmann::json;

namespace {

void AppendInt(int64_t value, std::string& out) { out += std::to_string(value); }

void AppendNumberOrNull(const std::optional<double>& value, std::string& out) {
  out += value ? json(*value).dump() : "null";
}

void AppendTimeOrNull(int64_t t, std::string& out) {
  if (t == 0) {
    out += "null";
  } else {
    AppendInt(t, out);
  }
}

}  // namespace

std::string CommandText(const json& command) {
  if (command.is_string()) return command.get<std::string>();
  std::string text;
  for (const json& arg : command) {
    if (!text.empty()) text += ' ';
    text += arg.get<std::string>();
  }
  return text;
}

json Argv(const json& command) {
  if (command.is_string()) return json::array({"/bin/sh", "-c", command});
  return command;
}

// Written member by member in key order (the order a std::map-keyed json object dumps them
// in, as the first version built one and dumped it; tests/wire/fixed_job_text_test.cc
// compares): building the object cost a map node and a copy per member, a quarter of a
// restart's CPU (issue 45). Strings come from a parsed spec (valid UTF-8), so AppendJsonString
// writes what dump() would.
std::shared_ptr<const std::string> FixedJobText(const json& spec) {
  std::string text;
  text.reserve(256);
  const auto key = [&text](std::string_view name) {
    if (!text.empty()) text += ',';
    AppendJsonKey(name, text);
  };
  const auto string_member = [&](std::string_view name) {
    key(name);
    auto it = spec.find(name);
    if (it == spec.end()) {
      text += "\"\"";
    } else if (it->is_string()) {
      AppendJsonString(it->get_ref<const std::string&>(), text);  // no copy
    } else {
      AppendJsonString(it->get<std::string>(), text);  // throws as value() would
    }
  };
  const auto json_member = [&](std::string_view name) {
    key(name);
    auto it = spec.find(name);
    text += it == spec.end() ? "null" : it->dump(-1, ' ', false, json::error_handler_t::replace);
  };
  const auto int_member = [&](std::string_view name, int fallback) {
    key(name);
    AppendInt(spec.value(name, fallback), text);
  };
  json_member("begin");
  key("command");
  if (auto it = spec.find("command"); it != spec.end() && it->is_string()) {
    AppendJsonString(it->get_ref<const std::string&>(), text);
  } else {
    AppendJsonString(CommandText(it == spec.end() ? json("") : *it), text);
  }
  string_member("cwd");
  string_member("depend");
  string_member("error");
  key("exclusive");
  text += spec.value("exclusive", false) ? "true" : "false";
  int_member("max_tasks", 1);
  int_member("min_tasks", 1);
  string_member("name");
  string_member("output");
  int_member("priority", 0);
  string_member("project");
  // Only a job in an advance reservation has one (R-RSV-2): other listings keep their bytes.
  if (const std::string rsv = spec.value("reservation", ""); !rsv.empty()) {
    key("reservation");
    AppendJsonString(rsv, text);
  }
  string_member("resreq");
  json_member("run_limit");
  text.shrink_to_fit();
  return std::make_shared<const std::string>(std::move(text));
}

const std::vector<std::string>& JobFieldNames() {
  static const std::vector<std::string> kNames = {"id",
                                                  "name",
                                                  "user",
                                                  "queue",
                                                  "state",
                                                  "submit_time",
                                                  "start_time",
                                                  "end_time",
                                                  "exit_code",
                                                  "cause",
                                                  "reason",
                                                  "tasks",
                                                  "min_tasks",
                                                  "max_tasks",
                                                  "resreq",
                                                  "run_limit",
                                                  "priority",
                                                  "project",
                                                  "exclusive",
                                                  "depend",
                                                  "begin",
                                                  "command",
                                                  "cwd",
                                                  "output",
                                                  "error",
                                                  "hosts",
                                                  "dispatch_attempts",
                                                  "message",
                                                  "account",
                                                  "cpu_seconds",
                                                  "max_rss_mb",
                                                  "estimated_start",
                                                  "index",
                                                  "array",
                                                  "elements",
                                                  "steps",
                                                  "reservation"};
  return kNames;
}

namespace {

// Writes the members of the fixed text (a flat object's members: strings, numbers, booleans,
// null — FixedJobText never nests) that `fields` selects.
void AppendFixedMembers(const std::string& fixed, const JobFields& fields, bool& first,
                        std::string& out) {
  size_t at = 0;
  while (at < fixed.size()) {
    // A member: "key":value, up to the next comma outside a string.
    const size_t key_end = fixed.find('"', at + 1);
    const std::string_view key(fixed.data() + at + 1, key_end - at - 1);
    size_t end = key_end + 2;
    bool in_string = false;
    for (; end < fixed.size(); ++end) {
      const char c = fixed[end];
      if (in_string) {
        if (c == '\\') {
          ++end;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == ',') {
        break;
      }
    }
    if (fields.contains(key)) {
      if (!first) out += ',';
      first = false;
      out.append(fixed, at, end - at);
    }
    at = end + 1;
  }
}

// [{"name":"h1","slots":2},...]
void AppendHosts(const std::vector<std::pair<std::string, int32_t>>& hosts, std::string& out) {
  out += '[';
  for (size_t i = 0; i < hosts.size(); ++i) {
    if (i > 0) out += ',';
    out += "{\"name\":";
    AppendJsonString(hosts[i].first, out);
    out += ",\"slots\":";
    AppendInt(hosts[i].second, out);
    out += '}';
  }
  out += ']';
}

// The `reasons` member's value: the text of ReasonsJson(e.reasons, e.reason, e.hint), or null
// when the job is not waiting.
void AppendReasons(const JobListEntry& e, std::string& out) {
  if (e.reason.empty()) {
    out += "null";
    return;
  }
  out += "{\"main\":";
  AppendJsonString(e.reasons ? core::ToString(e.reasons->main) : e.reason, out);
  out += ",\"details\":[";
  if (e.reasons) {
    bool first_detail = true;
    for (const core::ReasonDetail& d : e.reasons->details) {
      if (!first_detail) out += ',';
      first_detail = false;
      out += ReasonDetailToJson(d).dump();
    }
  }
  out += ']';
  if (!e.hint.empty()) {
    out += ",\"hint\":";
    AppendJsonString(e.hint, out);
  }
  out += '}';
}

// The value of `estimated_start` and the members that go with it (estimate_json.h); a job not
// estimated yet is unknown "not estimated yet".
void AppendEstimate(const core::StartEstimate* estimate, std::string& out) {
  nlohmann::ordered_json members;
  AddEstimateJson(
      estimate ? *estimate : core::StartEstimate{.unknown_because = "not estimated yet"}, members);
  for (auto it = members.begin(); it != members.end(); ++it) {
    if (it != members.begin()) {
      out += ',';
      AppendJsonKey(it.key(), out);
    }
    out += it.value().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

// The `steps` member's value: the stored text decoded and written again, so that the listing
// is JSON even if a row's text is not (one bad row must not break the listing of every job).
// false, with nothing written, when the text does not decode: the member is then left out.
bool AppendSteps(const std::string& stored, std::string& out) {
  Result<std::vector<StepRecord>> steps = DecodeSteps(stored);
  if (!steps) return false;
  out += EncodeSteps(*steps).dump(-1, ' ', false, json::error_handler_t::replace);
  return true;
}

}  // namespace

void AppendJobText(const JobListEntry& e, std::string& out, const JobFields* fields) {
  bool first = true;
  // Starts member `key` when selected; false when it is to be left out.
  const auto member = [&](const char* key) {
    if (fields != nullptr && !fields->contains(std::string_view(key))) return false;
    if (!first) out += ',';
    first = false;
    AppendJsonKey(key, out);
    return true;
  };
  out += '{';
  if (e.fixed && !e.fixed->empty()) {
    if (fields == nullptr) {
      out += *e.fixed;
      first = false;
    } else {
      AppendFixedMembers(*e.fixed, *fields, first, out);
    }
  }
  if (member("id")) AppendInt(ArrayIdOf(e.id), out);
  if (IsArrayElement(e.id) && member("index")) AppendInt(ArrayIndexOf(e.id), out);
  if (!e.array.empty() && member("array")) AppendJsonString(e.array, out);
  if (!e.array.empty() && member("elements")) {
    out += '{';
    for (size_t i = 0; i < e.elements.size(); ++i) {
      if (i > 0) out += ',';
      AppendJsonKey(e.elements[i].first, out);
      AppendInt(e.elements[i].second, out);
    }
    out += '}';
  }
  if (member("user")) AppendJsonString(e.user, out);
  if (member("queue")) AppendJsonString(e.queue, out);
  if (member("state")) AppendJsonString(e.state, out);
  if (member("submit_time")) AppendInt(e.submit_time, out);
  if (member("start_time")) AppendTimeOrNull(e.start_time, out);
  if (member("end_time")) AppendTimeOrNull(e.end_time, out);
  if (member("exit_code")) {
    if (e.exit_code) {
      AppendInt(*e.exit_code, out);
    } else {
      out += "null";
    }
  }
  if (member("cause")) {
    if (e.cause.empty()) {
      out += "null";
    } else {
      AppendJsonString(e.cause, out);
    }
  }
  if (member("reason")) {
    if (e.reason.empty()) {
      out += "null";
    } else {
      AppendJsonString(e.reason, out);
    }
  }
  if (member("tasks")) AppendInt(e.tasks, out);
  if (member("hosts")) AppendHosts(e.hosts, out);
  if (member("dispatch_attempts")) AppendInt(e.dispatch_attempts, out);
  if (member("account")) AppendJsonString(e.account, out);
  if (member("cpu_seconds")) AppendNumberOrNull(e.cpu_seconds, out);
  if (member("max_rss_mb")) AppendNumberOrNull(e.max_rss_mb, out);
  if (!e.message.empty() && member("message")) AppendJsonString(e.message, out);
  if (!e.steps.empty()) {
    // Only a job that launched steps has the member; a row whose text does not decode is shown
    // without it (the key is written only after its value is).
    std::string value;
    if (AppendSteps(e.steps, value) && member("steps")) out += value;
  }
  if (!e.reason.empty() && member("estimated_start")) AppendEstimate(e.estimate.get(), out);
  if (e.with_reasons) {
    // Asked for by pending_reasons=1, whatever `fields` says.
    if (!first) out += ',';
    first = false;
    AppendJsonKey("reasons", out);
    AppendReasons(e, out);
  }
  out += '}';
}

}  // namespace sluice::wire
