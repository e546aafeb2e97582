#include "agent/protocol.h"

#include <charconv>
#include <cmath>

namespace sluice::agent {
namespace {

using nlohmann::json;

Status TypeError(const std::string& field, const char* expected) {
  return InvalidArgument(field + ": expected " + expected);
}

// Reads an optional integer field; absent or null keeps `out`.
Status ReadInt(const json& object, const char* key, const std::string& where, int64_t& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_number_integer()) return TypeError(where + key, "an integer");
  out = it->get<int64_t>();
  return Status::Ok();
}

Status ReadString(const json& object, const char* key, const std::string& where,
                  std::string& out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return TypeError(where + key, "a string");
  out = it->get<std::string>();
  return Status::Ok();
}

Status ReadIdList(const json& body, const char* key, std::vector<int64_t>& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return TypeError(key, "an array of job ids");
  for (const json& id : *it) {
    if (!id.is_number_integer()) return TypeError(std::string(key) + "[]", "an integer");
    out.push_back(id.get<int64_t>());
  }
  return Status::Ok();
}

Result<JobSpec> ParseLaunch(const json& entry, const std::string& where,
                            const std::string& default_cwd) {
  if (!entry.is_object()) return TypeError(where, "an object");
  JobSpec spec;
  SLUICE_RETURN_IF_ERROR(ReadInt(entry, "job", where + ".", spec.job));
  if (spec.job <= 0) return InvalidArgument(where + ".job: expected a positive job id");
  if (auto argv = entry.find("argv"); argv != entry.end() && !argv->is_null()) {
    if (!argv->is_array() || argv->empty()) return TypeError(where + ".argv", "a non-empty array");
    for (const json& arg : *argv) {
      if (!arg.is_string()) return TypeError(where + ".argv[]", "a string");
      spec.argv.push_back(arg.get<std::string>());
    }
  }
  if (auto command = entry.find("command"); spec.argv.empty() && command != entry.end()) {
    if (command->is_array()) {
      for (const json& arg : *command) {
        if (!arg.is_string()) return TypeError(where + ".command[]", "a string");
        spec.argv.push_back(arg.get<std::string>());
      }
    } else if (command->is_string()) {
      spec.command = command->get<std::string>();
    } else {
      return TypeError(where + ".command", "a string or an array of strings");
    }
  }
  if (spec.argv.empty() && spec.command.empty()) {
    return InvalidArgument(where + ": neither argv nor command is set");
  }
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "cwd", where + ".", spec.cwd));
  if (spec.cwd.empty()) spec.cwd = default_cwd;
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "output", where + ".", spec.output));
  SLUICE_RETURN_IF_ERROR(ReadString(entry, "error", where + ".", spec.error));
  if (auto limit = entry.find("run_limit"); limit != entry.end() && !limit->is_null()) {
    if (!limit->is_number()) return TypeError(where + ".run_limit", "a number of seconds");
    spec.run_limit = std::chrono::milliseconds(std::llround(limit->get<double>() * 1000));
  }
  if (auto env = entry.find("env"); env != entry.end() && !env->is_null()) {
    if (!env->is_object()) return TypeError(where + ".env", "an object");
    for (const auto& [key, value] : env->items()) {
      if (!value.is_string()) return TypeError(where + ".env." + key, "a string");
      spec.env[key] = value.get<std::string>();
    }
  }
  return spec;
}

}  // namespace

json RegisterBody(const HostSpec& host, const std::vector<int64_t>& running, int64_t epoch) {
  json body = {{"name", host.name}, {"running", running}, {"epoch", epoch}};
  if (host.slots > 0) body["slots"] = host.slots;
  json resources = json::object();
  for (const auto& [key, value] : host.resources) {
    if (value == std::floor(value) && std::fabs(value) < 9e15) {
      resources[key] = static_cast<int64_t>(value);
    } else {
      resources[key] = value;
    }
  }
  body["resources"] = resources;
  body["attributes"] = host.attributes;
  body["tags"] = host.tags;
  return body;
}

json HeartbeatBody(const Heartbeat& heartbeat) {
  json exited = json::array();
  for (const JobExit& exit : heartbeat.exited) {
    json entry = {{"job", exit.job}, {"cause", ToString(exit.cause)}};
    // The exit status as a shell shows it: 128 + signal number when killed by a signal.
    if (exit.exit_code) {
      entry["exit_code"] = *exit.exit_code;
    } else if (exit.signal) {
      entry["exit_code"] = 128 + *exit.signal;
    } else {
      entry["exit_code"] = nullptr;
    }
    entry["signal"] = exit.signal ? json(*exit.signal) : json(nullptr);
    exited.push_back(std::move(entry));
  }
  json failed = json::array();
  for (const LaunchFailure& failure : heartbeat.launch_failed) {
    failed.push_back({{"job", failure.job}, {"message", failure.message}});
  }
  return {{"epoch", heartbeat.epoch}, {"wait_ms", heartbeat.wait_ms},
          {"running", heartbeat.running}, {"exited", exited}, {"launch_failed", failed}};
}

Result<RegisterReply> ParseRegisterReply(const json& body) {
  if (!body.is_object()) return TypeError("register response", "an object");
  RegisterReply reply;
  int64_t lease = reply.lease_seconds;
  int64_t heartbeat = reply.heartbeat_ms;
  SLUICE_RETURN_IF_ERROR(ReadInt(body, "epoch", "", reply.epoch));
  SLUICE_RETURN_IF_ERROR(ReadInt(body, "lease_seconds", "", lease));
  SLUICE_RETURN_IF_ERROR(ReadInt(body, "heartbeat_ms", "", heartbeat));
  if (lease <= 0) return InvalidArgument("lease_seconds: expected a positive integer");
  reply.lease_seconds = static_cast<int>(lease);
  reply.heartbeat_ms = static_cast<int>(std::clamp<int64_t>(heartbeat, 10, 10'000));
  return reply;
}

Result<HeartbeatReply> ParseHeartbeatReply(const json& body, const std::string& default_cwd) {
  if (!body.is_object()) return TypeError("heartbeat response", "an object");
  HeartbeatReply reply;
  SLUICE_RETURN_IF_ERROR(ReadInt(body, "epoch", "", reply.epoch));
  if (auto launch = body.find("launch"); launch != body.end() && !launch->is_null()) {
    if (!launch->is_array()) return TypeError("launch", "an array");
    for (size_t i = 0; i < launch->size(); ++i) {
      Result<JobSpec> spec =
          ParseLaunch((*launch)[i], "launch[" + std::to_string(i) + "]", default_cwd);
      if (!spec) return spec.error();
      reply.launch.push_back(std::move(*spec));
    }
  }
  if (auto kill = body.find("kill"); kill != body.end() && !kill->is_null()) {
    if (!kill->is_array()) return TypeError("kill", "an array");
    for (size_t i = 0; i < kill->size(); ++i) {
      const std::string where = "kill[" + std::to_string(i) + "].";
      const json& entry = (*kill)[i];
      if (!entry.is_object()) return TypeError(where, "an object");
      KillOrder order;
      int64_t grace = order.grace_seconds;
      SLUICE_RETURN_IF_ERROR(ReadInt(entry, "job", where, order.job));
      SLUICE_RETURN_IF_ERROR(ReadInt(entry, "grace_seconds", where, grace));
      order.grace_seconds = static_cast<int>(std::clamp<int64_t>(grace, 0, 3600));
      reply.kill.push_back(order);
    }
  }
  SLUICE_RETURN_IF_ERROR(ReadIdList(body, "ack", reply.ack));
  return reply;
}

Result<std::map<std::string, std::string>> ParseAttributeList(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("`" + item + "`: expected NAME=VALUE");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
    start = comma + 1;
  }
  return out;
}

Result<std::map<std::string, double>> ParseResourceList(const std::string& text) {
  Result<std::map<std::string, std::string>> items = ParseAttributeList(text);
  if (!items) return items.error();
  std::map<std::string, double> out;
  for (const auto& [key, value] : *items) {
    double number = 0;
    auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size() || number < 0) {
      return InvalidArgument("`" + key + "=" + value + "`: expected a non-negative number");
    }
    out[key] = number;
  }
  return out;
}

}  // namespace sluice::agent
