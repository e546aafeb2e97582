#include "wire/agent_protocol.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "wire/json_fields.h"
#include "wire/protocol_version.h"
#include "wire/signal_name.h"

namespace sluice::wire {
namespace {

using fields::AsInt64;
using fields::CheckFields;
using fields::Find;
using fields::IsNonNegativeInt;
using fields::ReadInt;
using fields::ReadString;
using fields::TypeError;
using nlohmann::json;

// "health" (wire/health_report.h): absent or null leaves `out` unset.
Status DecodeOptionalHealth(const json& body, std::optional<HealthReport>& out) {
  const json* health = Find(body, "health");
  if (health == nullptr) return Status::Ok();
  Result<HealthReport> report = DecodeHealthReport(*health);
  if (!report) return report.error();
  out = std::move(*report);
  return Status::Ok();
}

// An epoch: absent is 0; present, a non-negative integer (null is an error).
Status ReadEpoch(const json& object, uint64_t& out) {
  auto it = object.find("epoch");
  if (it == object.end()) return Status::Ok();
  if (!it->is_number_integer() || (!it->is_number_unsigned() && it->get<int64_t>() < 0)) {
    return TypeError("epoch", "an integer");
  }
  out = it->get<uint64_t>();
  return Status::Ok();
}

// An agent instance id: absent is empty; present, a string of at most 64 characters.
Status ReadInstance(const json& body, std::string& out) {
  SLUICE_RETURN_IF_ERROR(ReadString(body, "instance", "", out));
  if (out.size() > 64) return TypeError("instance", "at most 64 characters");
  return Status::Ok();
}

// A request's job id list: absent is empty; present, an array of integers.
Status ReadIdSet(const json& body, const char* key, std::set<int64_t>& out) {
  auto it = body.find(key);
  if (it == body.end()) return Status::Ok();
  if (!it->is_array()) return InvalidArgument(std::string(key) + ": expected a list of job ids");
  for (const json& id : *it) {
    int64_t value = 0;
    if (!AsInt64(id, value)) {
      return InvalidArgument(std::string(key) + ": expected job ids, got " +
                             id.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 64));
    }
    out.insert(value);
  }
  return Status::Ok();
}

// A reply's job id list (lenient about null).
Status ReadIdList(const json& body, const char* key, std::vector<int64_t>& out) {
  const json* list = Find(body, key);
  if (list == nullptr) return Status::Ok();
  if (!list->is_array()) return TypeError(key, "an array of job ids");
  for (const json& id : *list) {
    int64_t value = 0;
    if (!AsInt64(id, value)) return TypeError(std::string(key) + "[]", "an integer");
    out.push_back(value);
  }
  return Status::Ok();
}

bool ValidHostName(const std::string& name) {
  if (name.empty() || name.size() > 255) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

Status ReadHost(const json& body, core::HostSpec& host) {
  const json* name = Find(body, "name");
  if (name == nullptr || !name->is_string() || !ValidHostName(name->get<std::string>())) {
    return TypeError("name", "a host name (letters, digits, -._)");
  }
  host.name = name->get<std::string>();
  if (auto slots = body.find("slots"); slots != body.end()) {
    if (!IsNonNegativeInt(*slots, std::numeric_limits<int32_t>::max())) {
      return TypeError("slots", "an integer >= 0");
    }
    // 0 means "not said", as EncodeRegister writes it: the default (one slot) stays.
    if (const int32_t n = slots->get<int32_t>(); n > 0) host.slots = n;
  }
  if (const json* resources = Find(body, "resources")) {
    if (!resources->is_object()) return TypeError("resources", "an object");
    for (const auto& [key, value] : resources->items()) {
      if (!IsNonNegativeInt(value, std::numeric_limits<int64_t>::max())) {
        return TypeError("resources." + key, "an integer >= 0");
      }
      host.resources[key] = value.get<int64_t>();
    }
  }
  if (const json* attributes = Find(body, "attributes")) {
    if (!attributes->is_object()) return TypeError("attributes", "an object");
    for (const auto& [key, value] : attributes->items()) {
      if (!value.is_string()) return TypeError("attributes." + key, "a string");
      host.attributes[key] = value.get<std::string>();
    }
  }
  if (const json* tags = Find(body, "tags")) {
    if (!tags->is_array()) return TypeError("tags", "a list of strings");
    for (const json& tag : *tags) {
      if (!tag.is_string()) return TypeError("tags", "a list of strings");
      host.tags.push_back(tag.get<std::string>());
    }
  }
  return Status::Ok();
}

// An optional integer of at most 2^30 in size (an exit status or a signal number).
Status ReadSmallInt(const json& entry, const char* key, const std::string& where,
                    std::optional<int>& out) {
  const json* value = Find(entry, key);
  if (value == nullptr) return Status::Ok();
  int64_t number = 0;
  if (!AsInt64(*value, number) || number < -(1 << 30) || number > (1 << 30)) {
    return TypeError(where + "." + key, "an integer");
  }
  out = static_cast<int>(number);
  return Status::Ok();
}

// An optional measured amount: a finite number >= 0 (an integer is accepted).
Status ReadAmount(const json& entry, const char* key, const std::string& where,
                  std::optional<double>& out) {
  const json* value = Find(entry, key);
  if (value == nullptr) return Status::Ok();
  if (!value->is_number() || !std::isfinite(value->get<double>()) || value->get<double>() < 0) {
    return TypeError(where + "." + key, "a number >= 0");
  }
  out = value->get<double>();
  return Status::Ok();
}

// An optional limit of a launch: a positive integer up to `max`.
Status ReadLimit(const json& entry, const char* key, const std::string& where, int64_t max,
                 std::optional<int64_t>& out) {
  const json* value = Find(entry, key);
  if (value == nullptr) return Status::Ok();
  if (!value->is_number_integer() || value->get<int64_t>() < 1 || value->get<int64_t>() > max) {
    return TypeError(where + "." + key, "a positive integer");
  }
  out = value->get<int64_t>();
  return Status::Ok();
}

// A run number (Launch::run, ExitReport::run): absent or null is 0.
Status ReadRun(const json& entry, const std::string& where, uint64_t& out) {
  const json* run = Find(entry, "run");
  if (run == nullptr) return Status::Ok();
  int64_t value = 0;
  if (!AsInt64(*run, value) || value < 0) {
    return TypeError(where + ".run", "a non-negative integer");
  }
  out = static_cast<uint64_t>(value);
  return Status::Ok();
}

Result<ExitReport> DecodeExit(const json& entry, const std::string& where) {
  if (!entry.is_object()) return TypeError(where, "an object");
  ExitReport exit;
  const json* job = Find(entry, "job");
  if (job == nullptr || !AsInt64(*job, exit.job)) return TypeError(where + ".job", "an integer");
  SLUICE_RETURN_IF_ERROR(ReadRun(entry, where, exit.run));
  SLUICE_RETURN_IF_ERROR(ReadSmallInt(entry, "exit_code", where, exit.exit_code));
  SLUICE_RETURN_IF_ERROR(ReadSmallInt(entry, "signal", where, exit.signal));
  // Agents send the status a shell shows (128 + signal when killed); a report with neither
  // would record a made-up status.
  if (!exit.exit_code && !exit.signal) {
    return TypeError(where + ".exit_code", "an integer (or a signal)");
  }
  std::string cause = "exit";
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "cause", where + ".", cause));
  // An unknown cause (a newer agent) is a plain exit.
  if (cause == "run_limit") exit.cause = ExitCause::kRunLimit;
  if (cause == "killed") exit.cause = ExitCause::kKilled;
  if (cause == "mem_limit") exit.cause = ExitCause::kMemLimit;
  if (cause == "fenced") exit.cause = ExitCause::kFenced;
  SLUICE_RETURN_IF_ERROR(ReadAmount(entry, "cpu_seconds", where, exit.cpu_seconds));
  SLUICE_RETURN_IF_ERROR(ReadAmount(entry, "max_rss_mb", where, exit.max_rss_mb));
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "message", where + ".", exit.message));
  return exit;
}

Result<LaunchFailure> DecodeLaunchFailure(const json& entry, const std::string& where) {
  if (!entry.is_object()) return TypeError(where, "an object");
  LaunchFailure failure;
  const json* job = Find(entry, "job");
  if (job == nullptr || !AsInt64(*job, failure.job)) {
    return TypeError(where + ".job", "an integer");
  }
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "message", where + ".", failure.message));
  if (const json* host = Find(entry, "host_fault"); host != nullptr) {
    if (!host->is_boolean()) return TypeError(where + ".host_fault", "a boolean");
    failure.host_fault = host->get<bool>();
  }
  return failure;
}

// Applies `decode` to each entry of the array `key` (absent or null: none).
template <typename T, typename Decode>
Status DecodeArray(const json& body, const char* key, Decode decode, std::vector<T>& out) {
  const json* list = Find(body, key);
  if (list == nullptr) return Status::Ok();
  if (!list->is_array()) return TypeError(key, "an array");
  for (size_t i = 0; i < list->size(); ++i) {
    Result<T> entry = decode((*list)[i], std::string(key) + "[" + std::to_string(i) + "]");
    if (!entry) return entry.error();
    out.push_back(std::move(*entry));
  }
  return Status::Ok();
}

Status ReadStrings(const json& value, const std::string& field, std::vector<std::string>& out) {
  for (const json& arg : value) {
    if (!arg.is_string()) return TypeError(field + "[]", "a string");
    out.push_back(arg.get<std::string>());
  }
  return Status::Ok();
}

Status ReadCommand(const json& entry, const std::string& where, Launch& launch) {
  if (const json* argv = Find(entry, "argv")) {
    if (!argv->is_array() || argv->empty()) return TypeError(where + ".argv", "a non-empty array");
    SLUICE_RETURN_IF_ERROR(ReadStrings(*argv, where + ".argv", launch.argv));
  }
  // argv wins: a command is read only when there is no argv.
  if (auto command = entry.find("command"); launch.argv.empty() && command != entry.end()) {
    if (command->is_array()) {
      SLUICE_RETURN_IF_ERROR(ReadStrings(*command, where + ".command", launch.argv));
    } else if (command->is_string()) {
      launch.command = command->get<std::string>();
    } else {
      return TypeError(where + ".command", "a string or an array of strings");
    }
  }
  if (launch.argv.empty() && launch.command.empty()) {
    return InvalidArgument(where + ": neither argv nor command is set");
  }
  return Status::Ok();
}

Result<Launch> DecodeLaunch(const json& entry, const std::string& where) {
  if (!entry.is_object()) return TypeError(where, "an object");
  Launch launch;
  SLUICE_RETURN_IF_ERROR(ReadInt(entry, "job", where + ".", launch.job));
  if (launch.job <= 0) return InvalidArgument(where + ".job: expected a positive job id");
  SLUICE_RETURN_IF_ERROR(ReadRun(entry, where, launch.run));
  SLUICE_RETURN_IF_ERROR(ReadCommand(entry, where, launch));
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "cwd", where + ".", launch.cwd));
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "output", where + ".", launch.output));
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "error", where + ".", launch.error));
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "user", where + ".", launch.user));
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "account", where + ".", launch.account));
  SLUICE_RETURN_IF_ERROR(
      ReadLimit(entry, "mem_limit_mb", where, int64_t{1} << 40, launch.mem_limit_mb));
  std::optional<int64_t> cpus;
  SLUICE_RETURN_IF_ERROR(ReadLimit(entry, "cpu_limit", where, 1 << 20, cpus));
  if (cpus) launch.cpu_limit = static_cast<int>(*cpus);
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "script", where + ".", launch.script));
  Result<GpuBinding> gpus = DecodeGpuBinding(entry, where);
  if (!gpus) return gpus.error();
  launch.gpus = std::move(*gpus);
  if (const json* umask = Find(entry, "umask")) {
    if (!umask->is_number_integer() || umask->get<int64_t>() < 0 || umask->get<int64_t>() > 0777) {
      return TypeError(where + ".umask", "an integer in [0, 0777]");
    }
    launch.umask = static_cast<int>(umask->get<int64_t>());
  }
  if (const json* output_default = Find(entry, "output_default")) {
    if (!output_default->is_boolean()) return TypeError(where + ".output_default", "a boolean");
    launch.output_default = output_default->get<bool>();
  }
  if (const json* attach = Find(entry, "attach")) {
    if (!attach->is_object()) return TypeError(where + ".attach", "an object");
    Launch::Attach a;
    if (const json* pty = Find(*attach, "pty")) {
      if (!pty->is_boolean()) return TypeError(where + ".attach.pty", "a boolean");
      a.pty = pty->get<bool>();
    }
    for (auto [key, out] : {std::pair{"rows", &a.rows}, std::pair{"cols", &a.cols}}) {
      if (const json* v = Find(*attach, key)) {
        if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 10000) {
          return TypeError(where + ".attach." + key, "an integer in [0, 10000]");
        }
        *out = static_cast<int>(v->get<int64_t>());
      }
    }
    launch.attach = a;
  }
  if (const json* limit = Find(entry, "run_limit")) {
    if (!limit->is_number() || !std::isfinite(limit->get<double>()) ||
        std::fabs(limit->get<double>()) > 1e12) {
      return TypeError(where + ".run_limit", "a number of seconds");
    }
    launch.run_limit = std::chrono::milliseconds(std::llround(limit->get<double>() * 1000));
  }
  if (const json* env = Find(entry, "env")) {
    if (!env->is_object()) return TypeError(where + ".env", "an object");
    for (const auto& [key, value] : env->items()) {
      if (!value.is_string()) return TypeError(where + ".env." + key, "a string");
      launch.env[key] = value.get<std::string>();
    }
  }
  return launch;
}

Result<KillOrder> DecodeKill(const json& entry, const std::string& where) {
  if (!entry.is_object()) return TypeError(where + ".", "an object");
  KillOrder order;
  int64_t grace = order.grace_seconds;
  SLUICE_RETURN_IF_ERROR(ReadInt(entry, "job", where + ".", order.job));
  SLUICE_RETURN_IF_ERROR(ReadInt(entry, "grace_seconds", where + ".", grace));
  order.grace_seconds = static_cast<int>(std::clamp<int64_t>(grace, 0, 3600));
  return order;
}

Result<RunLimitOrder> DecodeRunLimit(const json& entry, const std::string& where) {
  if (!entry.is_object()) return TypeError(where + ".", "an object");
  RunLimitOrder order;
  SLUICE_RETURN_IF_ERROR(ReadInt(entry, "job", where + ".", order.job));
  const json* limit = Find(entry, "run_limit");
  if (limit != nullptr && !limit->is_null()) {
    if (!limit->is_number_integer() || limit->get<int64_t>() < 1) {
      return TypeError(where + ".run_limit", "a positive integer or null");
    }
    order.run_limit_seconds = limit->get<int64_t>();
  }
  return order;
}

}  // namespace

json EncodeSignalOrder(const SignalOrder& order) {
  json out = {{"job", order.job}, {"signal", order.signal}};
  if (order.run != 0) out["run"] = order.run;
  return out;
}

json EncodeRunLimitOrder(const RunLimitOrder& order) {
  return {{"job", order.job},
          {"run_limit", order.run_limit_seconds ? json(*order.run_limit_seconds) : json(nullptr)}};
}

int32_t ExitReport::ShellStatus() const {
  if (signal) return 128 + *signal;
  return exit_code.value_or(0);
}

json EncodeRegister(const RegisterRequest& request) {
  const core::HostSpec& host = request.host;
  json body = {{"name", host.name}, {"running", request.running}, {"epoch", request.epoch}};
  if (host.slots > 0) body["slots"] = host.slots;
  if (!request.instance.empty()) body["instance"] = request.instance;
  body["resources"] = host.resources;
  body["attributes"] = host.attributes;
  body["tags"] = host.tags;
  if (request.gpus) body["gpus"] = EncodeGpuReport(*request.gpus);
  if (request.health) body["health"] = EncodeHealthReport(*request.health);
  return body;
}

Result<RegisterRequest> DecodeRegister(const json& body) {
  static const std::set<std::string> kFields = {"name", "slots",   "resources", "attributes",
                                                "tags", "running", "epoch",     "instance",
                                                "gpus", "health"};
  SLUICE_RETURN_IF_ERROR(CheckFields(body, kFields));
  RegisterRequest request;
  SLUICE_RETURN_IF_ERROR(ReadHost(body, request.host));
  SLUICE_RETURN_IF_ERROR(ReadIdSet(body, "running", request.running));
  SLUICE_RETURN_IF_ERROR(ReadEpoch(body, request.epoch));
  SLUICE_RETURN_IF_ERROR(ReadInstance(body, request.instance));
  if (const json* gpus = Find(body, "gpus")) {
    Result<GpuReport> report = DecodeGpuReport(*gpus);
    if (!report) return report.error();
    request.gpus = std::move(*report);
  }
  SLUICE_RETURN_IF_ERROR(DecodeOptionalHealth(body, request.health));
  return request;
}

json EncodeHeartbeat(const HeartbeatRequest& request) {
  json exited = json::array();
  for (const ExitReport& exit : request.exited) {
    json entry = {{"job", exit.job},
                  {"cause", ToString(exit.cause)},
                  {"exit_code", exit.exit_code ? json(*exit.exit_code) : json(nullptr)},
                  {"signal", exit.signal ? json(*exit.signal) : json(nullptr)}};
    if (exit.run != 0) entry["run"] = exit.run;
    if (exit.cpu_seconds) entry["cpu_seconds"] = *exit.cpu_seconds;
    if (exit.max_rss_mb) entry["max_rss_mb"] = *exit.max_rss_mb;
    if (!exit.message.empty()) entry["message"] = exit.message;
    exited.push_back(std::move(entry));
  }
  json failed = json::array();
  for (const LaunchFailure& failure : request.launch_failed) {
    json entry = {{"job", failure.job}, {"message", failure.message}};
    if (failure.host_fault) entry["host_fault"] = true;
    failed.push_back(std::move(entry));
  }
  json body = {{"epoch", request.epoch},     {"wait_ms", request.wait_ms},
               {"running", request.running}, {"exited", exited},
               {"launch_failed", failed},    {"instance", request.instance}};
  if (request.load) {
    body["load"] = {{"r1m", request.load->r1m},
                    {"r5m", request.load->r5m},
                    {"r15m", request.load->r15m},
                    {"mem_available_mb", request.load->mem_available_mb}};
  }
  if (request.restarting) body["restarting"] = true;
  if (!request.peeks.empty()) {
    body["peeks"] = json::array();
    for (const PeekResult& result : request.peeks)
      body["peeks"].push_back(EncodePeekResult(result));
  }
  if (request.health) body["health"] = EncodeHealthReport(*request.health);
  return body;
}

namespace {

// "load": finite averages >= 0 and an integer mem_available_mb >= -1.
Result<HostLoad> DecodeHostLoad(const json& load) {
  if (!load.is_object()) return TypeError("load", "an object");
  static const std::set<std::string> kFields = {"r1m", "r5m", "r15m", "mem_available_mb"};
  SLUICE_RETURN_IF_ERROR(CheckFields(load, kFields, "load."));
  HostLoad out;
  for (auto [name, field] :
       {std::pair{"r1m", &out.r1m}, std::pair{"r5m", &out.r5m}, std::pair{"r15m", &out.r15m}}) {
    auto v = load.find(name);
    if (v == load.end() || !v->is_number() || !std::isfinite(v->get<double>()) ||
        v->get<double>() < 0) {
      return TypeError(std::string("load.") + name, "a number >= 0");
    }
    *field = v->get<double>();
  }
  if (auto mem = load.find("mem_available_mb"); mem != load.end()) {
    int64_t mb = 0;
    if (!AsInt64(*mem, mb) || mb < -1)
      return TypeError("load.mem_available_mb", "an integer >= -1");
    out.mem_available_mb = mb;
  }
  return out;
}

}  // namespace

Result<HeartbeatRequest> DecodeHeartbeat(const json& body) {
  static const std::set<std::string> kFields = {"epoch",         "wait_ms", "running",
                                                "exited",        "peeks",   "instance",
                                                "launch_failed", "load",    "health",
                                                "restarting"};
  SLUICE_RETURN_IF_ERROR(CheckFields(body, kFields));
  HeartbeatRequest request;
  if (auto restarting = body.find("restarting"); restarting != body.end()) {
    if (!restarting->is_boolean()) return TypeError("restarting", "true or false");
    request.restarting = restarting->get<bool>();
  }
  if (auto load = body.find("load"); load != body.end() && !load->is_null()) {
    Result<HostLoad> decoded = DecodeHostLoad(*load);
    if (!decoded) return decoded.error();
    request.load = *decoded;
  }
  SLUICE_RETURN_IF_ERROR(DecodeOptionalHealth(body, request.health));
  SLUICE_RETURN_IF_ERROR(ReadIdSet(body, "running", request.running));
  SLUICE_RETURN_IF_ERROR(ReadEpoch(body, request.epoch));
  if (auto wait = body.find("wait_ms"); wait != body.end()) {
    if (!wait->is_number_integer()) return TypeError("wait_ms", "an integer");
    request.wait_ms =
        wait->is_number_unsigned()
            ? static_cast<int64_t>(std::min<uint64_t>(wait->get<uint64_t>(), kMaxWaitMs))
            : std::clamp<int64_t>(wait->get<int64_t>(), 0, kMaxWaitMs);
  }
  SLUICE_RETURN_IF_ERROR(DecodeArray(body, "exited", DecodeExit, request.exited));
  SLUICE_RETURN_IF_ERROR(
      DecodeArray(body, "launch_failed", DecodeLaunchFailure, request.launch_failed));
  SLUICE_RETURN_IF_ERROR(ReadInstance(body, request.instance));
  Result<std::vector<PeekResult>> peeks = DecodePeekResults(body, "peeks");
  if (!peeks) return peeks.error();
  request.peeks = std::move(*peeks);
  return request;
}

json EncodeRegisterReply(const RegisterReply& reply) {
  json body = {{"epoch", reply.epoch},
               {"lease_seconds", reply.lease_seconds},
               {"heartbeat_ms", reply.heartbeat_ms}};
  if (reply.absence_seconds > 0) body["absence_seconds"] = reply.absence_seconds;
  // The controller's wire protocol (R-OPS-5); agents of 1.0 ignore the extra member.
  body["protocol"] = ToString(kProtocolVersion);
  if (reply.health_check) body["health_check"] = EncodeHealthCheck(reply.health_check);
  return body;
}

Result<RegisterReply> DecodeRegisterReply(const json& body) {
  if (!body.is_object()) return TypeError("register response", "an object");
  RegisterReply reply;
  int64_t lease = reply.lease_seconds;
  int64_t heartbeat = reply.heartbeat_ms;
  SLUICE_RETURN_IF_ERROR(ReadEpoch(body, reply.epoch));
  SLUICE_RETURN_IF_ERROR(ReadInt(body, "lease_seconds", "", lease));
  SLUICE_RETURN_IF_ERROR(ReadInt(body, "heartbeat_ms", "", heartbeat));
  if (lease <= 0 || lease > 86'400) {
    return InvalidArgument("lease_seconds: expected a positive integer");
  }
  reply.lease_seconds = static_cast<int>(lease);
  int64_t absence = lease;
  SLUICE_RETURN_IF_ERROR(ReadInt(body, "absence_seconds", "", absence));
  if (absence < lease || absence > 7 * 86'400) {
    return InvalidArgument("absence_seconds: expected at least lease_seconds, at most a week");
  }
  reply.absence_seconds = static_cast<int>(absence);
  reply.heartbeat_ms = static_cast<int>(std::clamp<int64_t>(heartbeat, 10, 10'000));
  if (auto check = body.find("health_check"); check != body.end()) {
    Result<std::optional<core::HealthCheck>> decoded = DecodeHealthCheck(*check);
    if (!decoded) return decoded.error();
    reply.health_check = std::move(*decoded);
  }
  return reply;
}

json EncodeLaunch(const Launch& launch) {
  json run_limit = nullptr;
  if (launch.run_limit) {
    const int64_t ms = launch.run_limit->count();
    run_limit = ms % 1000 == 0 ? json(ms / 1000) : json(static_cast<double>(ms) / 1000);
  }
  json body = {{"job", launch.job},         {"argv", launch.argv},     {"command", launch.command},
               {"cwd", launch.cwd},         {"output", launch.output}, {"error", launch.error},
               {"run_limit", run_limit},    {"env", launch.env},       {"user", launch.user},
               {"account", launch.account}, {"script", launch.script}};
  if (launch.run != 0) body["run"] = launch.run;
  if (launch.mem_limit_mb) body["mem_limit_mb"] = *launch.mem_limit_mb;
  if (launch.cpu_limit) body["cpu_limit"] = *launch.cpu_limit;
  if (launch.umask) body["umask"] = *launch.umask;
  if (launch.output_default) body["output_default"] = true;
  EncodeGpuBinding(launch.gpus, body);
  if (launch.attach) {
    body["attach"] = {
        {"pty", launch.attach->pty}, {"rows", launch.attach->rows}, {"cols", launch.attach->cols}};
  }
  // A launch by command alone: an empty argv is no argv (the decoder refuses `[]`; found by
  // tests/fuzz/agent_protocol_fuzz.cc).
  if (launch.argv.empty()) body.erase("argv");
  return body;
}

json EncodeHeartbeatReply(const HeartbeatReply& reply) {
  json launch = json::array();
  for (const Launch& entry : reply.launch) launch.push_back(EncodeLaunch(entry));
  json kill = json::array();
  for (const KillOrder& order : reply.kill) {
    kill.push_back({{"job", order.job}, {"grace_seconds", order.grace_seconds}});
  }
  json run_limits = json::array();
  for (const RunLimitOrder& order : reply.run_limits) {
    run_limits.push_back(EncodeRunLimitOrder(order));
  }
  json body = {{"epoch", reply.epoch},
               {"launch", launch},
               {"kill", kill},
               {"ack", reply.ack},
               {"run_limits", run_limits}};
  if (!reply.peek.empty()) {
    body["peek"] = json::array();
    for (const PeekOrder& order : reply.peek) body["peek"].push_back(EncodePeekOrder(order));
  }
  for (const StepOrder& order : reply.steps) body["steps"].push_back(EncodeStepOrder(order));
  for (const StepKill& order : reply.step_kill) body["step_kill"].push_back(EncodeStepKill(order));
  for (const SignalOrder& order : reply.signals) body["signal"].push_back(EncodeSignalOrder(order));
  if (reply.health_check) body["health_check"] = EncodeHealthCheck(*reply.health_check);
  return body;
}

namespace {

// The optional array `key` of `body`, each element decoded by `decode` (wire/step_stream.h).
template <typename T>
Status DecodeEach(const json& body, const char* key, Result<T> (*decode)(const json&),
                  std::vector<T>& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return TypeError(key, "an array");
  for (const json& entry : *it) {
    Result<T> decoded = decode(entry);
    if (!decoded) return decoded.error();
    out.push_back(std::move(*decoded));
  }
  return Status::Ok();
}

Result<SignalOrder> DecodeSignalOrder(const json& entry) {
  if (!entry.is_object()) return TypeError("signal.", "an object");
  SignalOrder order;
  SLUICE_RETURN_IF_ERROR(ReadInt(entry, "job", "signal.", order.job));
  if (order.job <= 0) return TypeError("signal.job", "a positive job id");
  if (const json* run = Find(entry, "run")) {
    if (!run->is_number_unsigned()) return TypeError("signal.run", "a run number");
    order.run = run->get<uint64_t>();
  }
  const json* name = Find(entry, "signal");
  if (name == nullptr || !name->is_string() || !SignalNumber(name->get<std::string>())) {
    return InvalidArgument("signal.signal: expected a signal name (" + SignalNames() + ")");
  }
  order.signal = name->get<std::string>();
  return order;
}

}  // namespace

Result<HeartbeatReply> DecodeHeartbeatReply(const json& body) {
  if (!body.is_object()) return TypeError("heartbeat response", "an object");
  HeartbeatReply reply;
  SLUICE_RETURN_IF_ERROR(ReadEpoch(body, reply.epoch));
  SLUICE_RETURN_IF_ERROR(DecodeArray(body, "launch", DecodeLaunch, reply.launch));
  SLUICE_RETURN_IF_ERROR(DecodeArray(body, "kill", DecodeKill, reply.kill));
  SLUICE_RETURN_IF_ERROR(DecodeArray(body, "run_limits", DecodeRunLimit, reply.run_limits));
  SLUICE_RETURN_IF_ERROR(ReadIdList(body, "ack", reply.ack));
  Result<std::vector<PeekOrder>> peek = DecodePeekOrders(body, "peek");
  if (!peek) return peek.error();
  reply.peek = std::move(*peek);
  SLUICE_RETURN_IF_ERROR(DecodeEach(body, "steps", DecodeStepOrder, reply.steps));
  SLUICE_RETURN_IF_ERROR(DecodeEach(body, "step_kill", DecodeStepKill, reply.step_kill));
  SLUICE_RETURN_IF_ERROR(DecodeEach(body, "signal", DecodeSignalOrder, reply.signals));
  if (auto check = body.find("health_check"); check != body.end()) {
    Result<std::optional<core::HealthCheck>> decoded = DecodeHealthCheck(*check);
    if (!decoded) return decoded.error();
    reply.health_check = std::move(*decoded);
  }
  return reply;
}

}  // namespace sluice::wire
