#include "server/job_spec.h"

#include <optional>
#include <set>

#include "base/array_ids.h"
#include "server/field_limits.h"
#include "server/job_arrays.h"
#include "wire/job_script.h"

namespace sluice::server {
namespace {

using nlohmann::json;

std::string Describe(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

Status Expected(const std::string& where, const std::string& field, const std::string& what,
                const json& got) {
  return InvalidArgument(where + "." + field + ": expected " + what + ", got " + Describe(got));
}

// A NUL byte would cut the text where the agent and the kernel read it (a path, an argv word,
// a variable): refused, naming the field (issue 48).
Status NoNul(const std::string& where, const std::string& field, const std::string& text) {
  if (text.find('\0') == std::string::npos) return Status::Ok();
  return InvalidArgument(where + "." + field + ": contains a NUL byte (\\u0000)");
}

}  // namespace

namespace {

Status CheckFieldNames(const json& body, const std::string& where) {
  if (!body.is_object()) {
    return InvalidArgument(where + ": expected a job object, got " + Describe(body));
  }
  static const std::set<std::string> kFields = {
      "command",   "name",   "queue",  "tasks",     "min_tasks", "max_tasks", "resreq",
      "run_limit", "begin",  "depend", "exclusive", "hold",      "priority",  "project",
      "cwd",       "output", "error",  "env",       "script",    "array",     "umask",
      "interactive", "reservation"};
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (!kFields.contains(it.key())) {
      return InvalidArgument(where + "." + it.key() + ": unknown field");
    }
  }
  return Status::Ok();
}

// script (R-UX-1): a non-empty string of at most kMaxScriptBytes; its job's command is then
// an argv (the script's name and arguments), ["script"] when absent.
Status ParseScript(const json& body, const std::string& where, json& spec) {
  if (!body.contains("script")) return Status::Ok();
  const json& script = body["script"];
  if (!script.is_string() || script.get_ref<const std::string&>().empty()) {
    return Expected(where, "script", "the script's text", script);
  }
  if (script.get_ref<const std::string&>().size() > wire::kMaxScriptBytes) {
    return Status(StatusCode::kResourceExhausted,
                  where +
                      ".script: " + std::to_string(script.get_ref<const std::string&>().size()) +
                      " bytes exceed the limit of " + std::to_string(wire::kMaxScriptBytes));
  }
  if (body.contains("command") && !body["command"].is_array()) {
    return Expected(where, "command", "the script's name and arguments (a list)", body["command"]);
  }
  spec["script"] = script;
  spec["command"] = json::array({"script"});
  return Status::Ok();
}

// command: a non-empty string or a non-empty array of strings; then the text fields.
Status ParseCommandAndTexts(const json& body, const std::string& where, json& spec) {
  SLUICE_RETURN_IF_ERROR(ParseScript(body, where, spec));
  if (!body.contains("command") && !spec.contains("script")) {
    return InvalidArgument(where + ".command: missing");
  }
  const json& command = body.contains("command") ? body["command"] : spec["command"];
  bool command_ok = (command.is_string() && !command.get<std::string>().empty()) ||
                    (command.is_array() && !command.empty());
  if (command.is_array()) {
    for (const json& arg : command) command_ok = command_ok && arg.is_string();
  }
  if (!command_ok) {
    return Expected(where, "command", "a non-empty string or list of strings", command);
  }
  if (command.is_string()) SLUICE_RETURN_IF_ERROR(NoNul(where, "command", command));
  for (size_t i = 0; command.is_array() && i < command.size(); ++i) {
    SLUICE_RETURN_IF_ERROR(NoNul(where, "command[" + std::to_string(i) + "]", command[i]));
  }
  spec["command"] = command;
  // The advance reservation it runs in (R-RSV-2, `-U NAME`): kept only when named, so the
  // specs of other jobs stay as they were.
  if (body.contains("reservation")) {
    const json& rsv = body["reservation"];
    if (!rsv.is_string() && !rsv.is_null()) return Expected(where, "reservation", "a name", rsv);
    if (rsv.is_string()) SLUICE_RETURN_IF_ERROR(NoNul(where, "reservation", rsv));
    if (rsv.is_string() && !rsv.get<std::string>().empty()) spec["reservation"] = rsv;
  }
  for (const char* field :
       {"name", "queue", "resreq", "depend", "project", "cwd", "output", "error"}) {
    if (!body.contains(field)) {
      spec[field] = "";
    } else if (!body[field].is_string()) {
      return Expected(where, field, "a string", body[field]);
    } else {
      SLUICE_RETURN_IF_ERROR(NoNul(where, field, body[field]));
      spec[field] = body[field];
    }
  }
  return Status::Ok();
}

// An optional integer field within [min, max] (null is absent).
Result<std::optional<int64_t>> Integer(const json& body, const std::string& where,
                                       const char* field, int64_t min, int64_t max) {
  if (!body.contains(field) || body[field].is_null()) return std::optional<int64_t>();
  const json& v = body[field];
  // An unsigned value above 2^63-1 would read as a negative int64_t.
  const bool fits = v.is_number_integer() &&
                    !(v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max));
  if (!fits || v.get<int64_t>() < min || v.get<int64_t>() > max) {
    return Expected(where, field,
                    "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]", v);
  }
  return std::optional<int64_t>(v.get<int64_t>());
}

// tasks (or min_tasks/max_tasks), run_limit, begin, priority.
Status ParseNumbers(const json& body, const std::string& where, json& spec) {
  auto tasks = Integer(body, where, "tasks", 1, 1'000'000);
  auto min_tasks = Integer(body, where, "min_tasks", 1, 1'000'000);
  auto max_tasks = Integer(body, where, "max_tasks", 1, 1'000'000);
  auto run_limit = Integer(body, where, "run_limit", 1, int64_t{1} << 40);
  auto begin = Integer(body, where, "begin", 0, int64_t{1} << 40);
  auto priority = Integer(body, where, "priority", -1'000'000, 1'000'000);
  auto umask = Integer(body, where, "umask", 0, 0777);  // the submitter's (output file modes)
  for (const auto* r : {&tasks, &min_tasks, &max_tasks, &run_limit, &begin, &priority, &umask}) {
    if (!*r) return r->error();
  }
  if (*tasks && (*min_tasks || *max_tasks)) {
    return InvalidArgument(where + ".tasks: not together with min_tasks/max_tasks");
  }
  int64_t lo = 1;
  int64_t hi = 1;
  if (*tasks) {
    lo = hi = **tasks;
  } else {
    lo = min_tasks->value_or(max_tasks->value_or(1));
    hi = max_tasks->value_or(lo);
    if (hi < lo) {
      return InvalidArgument(where + ".max_tasks: " + std::to_string(hi) + " is below min_tasks " +
                             std::to_string(lo));
    }
  }
  spec["min_tasks"] = lo;
  spec["max_tasks"] = hi;
  spec["run_limit"] = *run_limit ? json(**run_limit) : json(nullptr);
  spec["begin"] = *begin ? json(**begin) : json(nullptr);
  spec["priority"] = priority->value_or(0);
  if (*umask) spec["umask"] = **umask;
  return Status::Ok();
}

// exclusive, hold and env.
Status ParseFlagsAndEnv(const json& body, const std::string& where, json& spec) {
  for (const char* field : {"exclusive", "hold"}) {
    if (!body.contains(field)) {
      spec[field] = false;
    } else if (!body[field].is_boolean()) {
      return Expected(where, field, "true or false", body[field]);
    } else {
      spec[field] = body[field];
    }
  }
  spec["env"] = json::object();
  if (!body.contains("env")) return Status::Ok();
  const json& env = body["env"];
  if (!env.is_object()) return Expected(where, "env", "an object of strings", env);
  for (auto it = env.begin(); it != env.end(); ++it) {
    if (!it.value().is_string() || it.key().empty() || it.key().find('=') != std::string::npos) {
      return Expected(where, "env." + it.key(), "a string value and a name without '='",
                      it.value());
    }
    SLUICE_RETURN_IF_ERROR(NoNul(where, "env", it.key()));
    SLUICE_RETURN_IF_ERROR(NoNul(where, "env." + it.key(), it.value()));
  }
  spec["env"] = env;
  return Status::Ok();
}

// interactive (R-LAUNCH-3, `sluice run`): {"pty": bool, "rows": N, "cols": N}; not an array.
Status ParseInteractive(const json& body, const std::string& where, json& spec) {
  if (!body.contains("interactive")) return Status::Ok();
  const json& i = body["interactive"];
  if (!i.is_object()) return Expected(where, "interactive", "an object {pty, rows, cols}", i);
  json out = {{"pty", false}, {"rows", 0}, {"cols", 0}};
  for (const auto& [key, value] : i.items()) {
    if (key == "pty" && value.is_boolean()) {
      out["pty"] = value;
    } else if ((key == "rows" || key == "cols") && value.is_number_integer() &&
               value.get<int64_t>() >= 0 && value.get<int64_t>() <= 10000) {
      out[key] = value;
    } else {
      return InvalidArgument(where + ".interactive." + key +
                             ": expected pty (true or false), rows or cols (0 to 10000)");
    }
  }
  if (body.contains("array")) {
    return InvalidArgument(where + ".interactive: an array cannot be interactive");
  }
  spec["interactive"] = std::move(out);
  return Status::Ok();
}

}  // namespace

Result<json> ParseSubmission(const json& body, const std::string& where) {
  SLUICE_RETURN_IF_ERROR(CheckFieldNames(body, where));
  json spec = json::object();
  SLUICE_RETURN_IF_ERROR(ParseCommandAndTexts(body, where, spec));
  SLUICE_RETURN_IF_ERROR(ParseNumbers(body, where, spec));
  SLUICE_RETURN_IF_ERROR(ParseFlagsAndEnv(body, where, spec));
  SLUICE_RETURN_IF_ERROR(ParseArrayField(body, where, spec));  // R-UX-3
  SLUICE_RETURN_IF_ERROR(ParseInteractive(body, where, spec));  // R-LAUNCH-3
  SLUICE_RETURN_IF_ERROR(CheckFieldLimits(spec, where));       // issue 19
  return spec;
}

Status SpecUnreadable(JobId id) {
  return Status(StatusCode::kUnavailable,
                "job " + FormatJobId(id) + ": its spec cannot be read now; retry");
}

core::JobSpec ToCoreSpec(const json& spec, JobId id) {
  core::JobSpec s;
  s.id = id;
  s.name = spec.value("name", "");
  s.user = spec.value("user", "");
  s.project = spec.value("project", "");
  s.queue = spec.value("queue", "");
  s.command = CommandText(spec["command"]);
  s.resreq = spec.value("resreq", "");
  s.min_tasks = spec.value("min_tasks", 1);
  s.max_tasks = spec.value("max_tasks", 1);
  if (spec.contains("run_limit") && spec["run_limit"].is_number()) {
    s.run_limit = spec["run_limit"].get<int64_t>();
  }
  s.priority = spec.value("priority", 0);
  s.submit_time = spec.value("submit_time", int64_t{0});
  if (spec.contains("begin") && spec["begin"].is_number())
    s.begin_time = spec["begin"].get<int64_t>();
  s.depend = spec.value("depend", "");
  s.exclusive = spec.value("exclusive", false);
  s.hold = spec.value("hold", false);
  s.reservation = spec.value("reservation", "");  // R-RSV-2, `-U NAME`
  return s;
}

}  // namespace sluice::server
