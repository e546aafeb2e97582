// Row codec (see row_codec.h): stable field names; nulls and defaults left out.
#include "store/row_codec.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>

#include "base/json_text.h"

namespace sluice::store {
namespace {

using Json = nlohmann::json;

// Members of the row's object, each preceded by its comma (the object starts with "id");
// a member at its default is left out (DecodeJob gives the default back).
void Key(std::string& out, std::string_view name) {
  out += ',';
  AppendJsonKey(name, out);
}

template <typename T>
void Integer(std::string& out, std::string_view name, T value) {
  if (value == T{}) return;
  Key(out, name);
  out += std::to_string(value);
}

void Text(std::string& out, std::string_view name, const std::string& value) {
  if (value.empty()) return;
  Key(out, name);
  AppendJsonString(value, out);
}

template <typename T>
void Optional(std::string& out, std::string_view name, const std::optional<T>& value) {
  if (!value) return;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*value)) return;  // JSON has no inf or nan: read back as absent
    char digits[32];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, *value);  // shortest
    Key(out, name);
    out.append(digits, end);
  } else {
    Key(out, name);
    out += std::to_string(*value);
  }
}

template <typename T>
std::optional<T> ReadOptional(const Json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

}  // namespace

// Written as text: building a nlohmann::json object first (a std::map, an allocation a member)
// was ~11 % of an etcd-backed server's CPU at 2,000 hosts.
std::string EncodeJob(const StoredJob& r) {
  std::string out;
  out.reserve(256);
  out += "{\"id\":";
  out += std::to_string(r.id);
  Text(out, "state", r.state);
  Integer(out, "seq", r.seq);
  Integer(out, "submit_time", r.submit_time);
  Integer(out, "start_time", r.start_time);
  Integer(out, "end_time", r.end_time);
  Text(out, "cause", r.cause);
  Text(out, "allocation", r.allocation);
  Integer(out, "start_seq", r.start_seq);
  Text(out, "phase", r.phase);
  Integer(out, "enqueue_time", r.enqueue_time);
  Text(out, "policy", r.policy);
  Integer(out, "bypass_count", r.bypass_count);
  Integer(out, "epoch", r.epoch);
  Integer(out, "dispatch_attempts", r.dispatch_attempts);
  if (r.cancel_requested) out += ",\"cancel_requested\":true";
  Integer(out, "preempted_for", r.preempted_for);
  Integer(out, "preempt_kill_at", r.preempt_kill_at);
  Optional(out, "exit_code", r.exit_code);
  Optional(out, "cpu_seconds", r.cpu_seconds);
  Optional(out, "max_rss_mb", r.max_rss_mb);
  Text(out, "message", r.message);
  Text(out, "array_states", r.array_states);
  Text(out, "steps", r.steps);
  Text(out, "events", r.events);
  Optional(out, "first_blocked", r.first_blocked);
  Optional(out, "gate_since", r.gate_since);
  out += '}';
  return out;
}

Result<StoredJob> DecodeJob(const std::string& text, const std::string& where, bool* has_spec) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("id") || !j["id"].is_number_integer()) {
    return Internal(where + ": not a job row");
  }
  if (has_spec != nullptr) *has_spec = j.contains("spec");
  StoredJob r;
  try {
    r.id = j["id"].get<JobId>();
    r.spec = j.value("spec", "");
    r.state = j.value("state", "");
    r.seq = j.value("seq", uint64_t{0});
    r.submit_time = j.value("submit_time", int64_t{0});
    r.start_time = j.value("start_time", int64_t{0});
    r.end_time = j.value("end_time", int64_t{0});
    r.exit_code = ReadOptional<int32_t>(j, "exit_code");
    r.cause = j.value("cause", "");
    r.allocation = j.value("allocation", "");
    r.start_seq = j.value("start_seq", uint64_t{0});
    r.phase = j.value("phase", "");
    r.enqueue_time = j.value("enqueue_time", int64_t{0});
    r.policy = j.value("policy", "");
    r.bypass_count = j.value("bypass_count", int32_t{0});
    r.first_blocked = ReadOptional<int64_t>(j, "first_blocked");
    r.gate_since = ReadOptional<int64_t>(j, "gate_since");
    r.epoch = j.value("epoch", uint64_t{0});
    r.dispatch_attempts = j.value("dispatch_attempts", int32_t{0});
    r.cancel_requested = j.value("cancel_requested", false);
    r.preempted_for = j.value("preempted_for", JobId{0});
    r.preempt_kill_at = j.value("preempt_kill_at", int64_t{0});
    r.cpu_seconds = ReadOptional<double>(j, "cpu_seconds");
    r.max_rss_mb = ReadOptional<double>(j, "max_rss_mb");
    r.message = j.value("message", "");
    r.array_states = j.value("array_states", "");
    r.steps = j.value("steps", "");
    r.events = j.value("events", "");
  } catch (const Json::exception& e) {  // a field of the wrong type
    return Internal(where + ": " + e.what());
  }
  return r;
}

}  // namespace sluice::store
