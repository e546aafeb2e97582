// Row codec (see row_codec.h): stable field names; nulls and defaults left out.
#include "store/row_codec.h"

#include <nlohmann/json.hpp>

namespace sluice::store {
namespace {

using Json = nlohmann::json;

template <typename T>
void Optional(Json& j, const char* field, const std::optional<T>& value) {
  if (value) j[field] = *value;
}

template <typename T>
void NonDefault(Json& j, const char* field, const T& value) {
  if (value != T{}) j[field] = value;
}

template <typename T>
std::optional<T> ReadOptional(const Json& j, const char* field) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

}  // namespace

std::string EncodeJob(const StoredJob& r) {
  Json j = {{"id", r.id}};
  NonDefault(j, "state", r.state);
  NonDefault(j, "seq", r.seq);
  NonDefault(j, "submit_time", r.submit_time);
  NonDefault(j, "start_time", r.start_time);
  NonDefault(j, "end_time", r.end_time);
  NonDefault(j, "cause", r.cause);
  NonDefault(j, "allocation", r.allocation);
  NonDefault(j, "start_seq", r.start_seq);
  NonDefault(j, "phase", r.phase);
  NonDefault(j, "enqueue_time", r.enqueue_time);
  NonDefault(j, "policy", r.policy);
  NonDefault(j, "bypass_count", r.bypass_count);
  NonDefault(j, "epoch", r.epoch);
  NonDefault(j, "dispatch_attempts", r.dispatch_attempts);
  NonDefault(j, "cancel_requested", r.cancel_requested);
  NonDefault(j, "preempted_for", r.preempted_for);
  NonDefault(j, "preempt_kill_at", r.preempt_kill_at);
  Optional(j, "exit_code", r.exit_code);
  Optional(j, "cpu_seconds", r.cpu_seconds);
  Optional(j, "max_rss_mb", r.max_rss_mb);
  NonDefault(j, "message", r.message);
  NonDefault(j, "array_states", r.array_states);
  Optional(j, "first_blocked", r.first_blocked);
  Optional(j, "gate_since", r.gate_since);
  return j.dump();
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
  } catch (const Json::exception& e) {  // a field of the wrong type
    return Internal(where + ": " + e.what());
  }
  return r;
}

}  // namespace sluice::store
