#include "wire/health_report.h"

#include <algorithm>
#include <set>

#include "base/utf8.h"
#include "wire/json_fields.h"

namespace sluice::wire {
namespace {

using fields::CheckFields;
using fields::TypeError;
using nlohmann::json;

Status ReadSeconds(const json& object, const char* key, int64_t& out) {
  auto it = object.find(key);
  if (it == object.end()) return Status::Ok();
  if (!fields::IsNonNegativeInt(*it, kMaxHealthSeconds) || it->get<int64_t>() < 1) {
    return TypeError(std::string("health_check.") + key, "seconds, 1 to a week");
  }
  out = it->get<int64_t>();
  return Status::Ok();
}

}  // namespace

std::string ClipHealthMessage(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const size_t length = Utf8SequenceLength(text, i);
    if (out.size() + std::max<size_t>(length, 1) > kMaxHealthMessageBytes) break;
    if (length == 0) {
      out += '?';
      ++i;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (length == 1 && (c < 0x20 || c == 0x7f)) {
      out += ' ';
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

json EncodeHealthReport(const HealthReport& report) {
  return {{"ok", report.ok}, {"message", report.message}};
}

Result<HealthReport> DecodeHealthReport(const json& value) {
  if (!value.is_object()) return TypeError("health", "an object");
  SLUICE_RETURN_IF_ERROR(CheckFields(value, {"ok", "message"}, "health."));
  HealthReport report;
  auto ok = value.find("ok");
  if (ok == value.end() || !ok->is_boolean()) return TypeError("health.ok", "a boolean");
  report.ok = ok->get<bool>();
  SLUICE_RETURN_IF_ERROR(fields::ReadString(value, "message", "health.", report.message));
  if (report.message.size() > kMaxHealthMessageBytes ||
      FirstInvalidUtf8(report.message) != std::string::npos) {
    return TypeError("health.message", "UTF-8 text of at most 256 bytes");
  }
  return report;
}

json EncodeHealthCheck(const std::optional<core::HealthCheck>& check) {
  if (!check) return nullptr;
  return {{"program", check->program}, {"interval", check->interval}, {"timeout", check->timeout}};
}

Result<std::optional<core::HealthCheck>> DecodeHealthCheck(const json& value) {
  if (value.is_null()) return std::optional<core::HealthCheck>();
  if (!value.is_object()) return TypeError("health_check", "an object or null");
  core::HealthCheck check;
  SLUICE_RETURN_IF_ERROR(fields::ReadString(value, "program", "health_check.", check.program));
  if (check.program.empty() || check.program.front() != '/' ||
      check.program.size() > kMaxHealthProgramBytes ||
      check.program.find('\0') != std::string::npos) {
    return TypeError("health_check.program", "an absolute path");
  }
  SLUICE_RETURN_IF_ERROR(ReadSeconds(value, "interval", check.interval));
  SLUICE_RETURN_IF_ERROR(ReadSeconds(value, "timeout", check.timeout));
  return std::optional<core::HealthCheck>(std::move(check));
}

}  // namespace sluice::wire
