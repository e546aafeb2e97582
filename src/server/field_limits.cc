#include "server/field_limits.h"

#include <utility>

namespace sluice::server {

using nlohmann::json;

namespace {

Status TooLarge(const std::string& where, const std::string& field, size_t got, size_t limit,
                const char* unit) {
  return InvalidArgument(where + "." + field + ": " + std::to_string(got) + " " + unit +
                         " exceed the limit of " + std::to_string(limit) + " " + unit);
}

Status CheckCommand(const json& command, const std::string& where) {
  size_t bytes = 0;
  if (command.is_string()) {
    bytes = command.get_ref<const std::string&>().size();
  } else if (command.is_array()) {
    if (command.size() > FieldLimits::kCommandArgs) {
      return TooLarge(where, "command", command.size(), FieldLimits::kCommandArgs, "arguments");
    }
    for (const json& arg : command) {
      if (arg.is_string()) bytes += arg.get_ref<const std::string&>().size() + 1;
    }
  }
  if (bytes > FieldLimits::kCommandBytes) {
    return TooLarge(where, "command", bytes, FieldLimits::kCommandBytes, "bytes");
  }
  return Status::Ok();
}

Status CheckEnv(const json& env, const std::string& where) {
  if (!env.is_object()) return Status::Ok();
  if (env.size() > FieldLimits::kEnvVariables) {
    return TooLarge(where, "env", env.size(), FieldLimits::kEnvVariables, "variables");
  }
  size_t bytes = 0;
  for (auto it = env.begin(); it != env.end(); ++it) {
    bytes += it.key().size() + 1;
    if (it.value().is_string()) bytes += it.value().get_ref<const std::string&>().size() + 1;
  }
  if (bytes > FieldLimits::kEnvBytes) {
    return TooLarge(where, "env", bytes, FieldLimits::kEnvBytes, "bytes");
  }
  return Status::Ok();
}

}  // namespace

Status CheckFieldLimits(const json& spec, const std::string& where) {
  if (spec.contains("command")) SLUICE_RETURN_IF_ERROR(CheckCommand(spec["command"], where));
  static const std::pair<const char*, size_t> kTexts[] = {
      {"name", FieldLimits::kNameBytes},       {"queue", FieldLimits::kQueueBytes},
      {"project", FieldLimits::kProjectBytes}, {"resreq", FieldLimits::kResreqBytes},
      {"depend", FieldLimits::kDependBytes},   {"cwd", FieldLimits::kPathBytes},
      {"output", FieldLimits::kPathBytes},     {"error", FieldLimits::kPathBytes},
  };
  for (const auto& [field, limit] : kTexts) {
    if (!spec.contains(field) || !spec[field].is_string()) continue;
    const size_t bytes = spec[field].get_ref<const std::string&>().size();
    if (bytes > limit) return TooLarge(where, field, bytes, limit, "bytes");
  }
  if (spec.contains("env")) SLUICE_RETURN_IF_ERROR(CheckEnv(spec["env"], where));
  return Status::Ok();
}

}  // namespace sluice::server
