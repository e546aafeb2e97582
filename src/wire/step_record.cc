// Steps as JSON (see step_record.h): every member written, every member checked on reading.
#include "wire/step_record.h"

#include <cmath>
#include <limits>
#include <set>

namespace sluice::wire {
namespace {

using nlohmann::json;

json NumberOrNull(const std::optional<double>& value) {
  if (!value || !std::isfinite(*value)) return nullptr;  // JSON has no inf or nan
  return *value;
}

template <typename T>
json IntegerOrNull(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

// Reads one member of element `index`; each failure names "steps[index].member".
class ElementReader {
 public:
  ElementReader(const json& element, size_t index) : element_(element), index_(index) {}

  Status Wrong(const char* member, const std::string& what) const {
    return InvalidArgument("steps[" + std::to_string(index_) + "]." + member + ": " + what);
  }

  // The member itself; a missing member is an error (every member is always written).
  Result<const json*> Find(const char* member) const {
    auto it = element_.find(member);
    if (it == element_.end()) return Wrong(member, "missing");
    return &*it;
  }

  template <typename T>
  Status Integer(const char* member, T& out) const {
    Result<const json*> value = Find(member);
    if (!value) return value.error();
    const json& v = **value;
    if (!v.is_number_integer()) return Wrong(member, "expected an integer");
    // Both signed and unsigned JSON integers, checked against T's range before converting.
    if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
        return Wrong(member, "out of range");
      }
    } else if (v.get<int64_t>() < std::numeric_limits<T>::min() ||
               v.get<int64_t>() > std::numeric_limits<T>::max()) {
      return Wrong(member, "out of range");
    }
    out = v.get<T>();
    return Status::Ok();
  }

  template <typename T>
  Status OptionalInteger(const char* member, std::optional<T>& out) const {
    Result<const json*> value = Find(member);
    if (!value) return value.error();
    if ((*value)->is_null()) {
      out.reset();
      return Status::Ok();
    }
    if (!(*value)->is_number_integer()) return Wrong(member, "expected an integer or null");
    T read{};
    SLUICE_RETURN_IF_ERROR(Integer(member, read));
    out = read;
    return Status::Ok();
  }

  Status OptionalNumber(const char* member, std::optional<double>& out) const {
    Result<const json*> value = Find(member);
    if (!value) return value.error();
    if ((*value)->is_null()) {
      out.reset();
    } else if ((*value)->is_number()) {
      out = (*value)->get<double>();
    } else {
      return Wrong(member, "expected a number or null");
    }
    return Status::Ok();
  }

  Status String(const char* member, std::string& out) const {
    Result<const json*> value = Find(member);
    if (!value) return value.error();
    if (!(*value)->is_string()) return Wrong(member, "expected a string");
    out = (*value)->get<std::string>();
    return Status::Ok();
  }

 private:
  const json& element_;
  size_t index_;
};

Result<StepRecord> DecodeStep(const json& element, size_t index) {
  const ElementReader read(element, index);
  if (!element.is_object()) {
    return InvalidArgument("steps[" + std::to_string(index) + "]: expected an object");
  }
  StepRecord s;
  SLUICE_RETURN_IF_ERROR(read.Integer("step", s.step));
  SLUICE_RETURN_IF_ERROR(read.String("host", s.host));
  SLUICE_RETURN_IF_ERROR(read.String("command", s.command));
  SLUICE_RETURN_IF_ERROR(read.Integer("start_time", s.start_time));
  SLUICE_RETURN_IF_ERROR(read.Integer("end_time", s.end_time));
  SLUICE_RETURN_IF_ERROR(read.OptionalInteger("exit_code", s.exit_code));
  SLUICE_RETURN_IF_ERROR(read.OptionalInteger("signal", s.signal));
  SLUICE_RETURN_IF_ERROR(read.OptionalNumber("cpu_seconds", s.cpu_seconds));
  SLUICE_RETURN_IF_ERROR(read.OptionalNumber("max_rss_mb", s.max_rss_mb));
  SLUICE_RETURN_IF_ERROR(read.String("state", s.state));
  if (s.step < 1) return read.Wrong("step", "expected 1 or more");
  if (s.start_time < 0) return read.Wrong("start_time", "expected 0 or more");
  if (s.end_time < 0) return read.Wrong("end_time", "expected 0 or more");
  if (s.signal && *s.signal < 1) return read.Wrong("signal", "expected 1 or more, or null");
  if (!IsStepState(s.state)) {
    return read.Wrong("state", "'" + s.state + "' is not RUNNING, COMPLETED, FAILED or CANCELLED");
  }
  // A running step has not ended: anything else would show an end and an exit that never were.
  if (s.state == "RUNNING" && s.end_time != 0) return read.Wrong("end_time", "set while RUNNING");
  if (s.state == "RUNNING" && s.exit_code) return read.Wrong("exit_code", "set while RUNNING");
  return s;
}

}  // namespace

bool IsStepState(std::string_view state) {
  return state == "RUNNING" || state == "COMPLETED" || state == "FAILED" || state == "CANCELLED";
}

json EncodeSteps(const std::vector<StepRecord>& steps) {
  json out = json::array();
  for (const StepRecord& s : steps) {
    out.push_back({{"step", s.step},
                   {"host", s.host},
                   {"command", s.command},
                   {"start_time", s.start_time},
                   {"end_time", s.end_time},
                   {"exit_code", IntegerOrNull(s.exit_code)},
                   {"signal", IntegerOrNull(s.signal)},
                   {"cpu_seconds", NumberOrNull(s.cpu_seconds)},
                   {"max_rss_mb", NumberOrNull(s.max_rss_mb)},
                   {"state", s.state}});
  }
  return out;
}

Result<std::vector<StepRecord>> DecodeStepsJson(const json& steps) {
  if (!steps.is_array()) return InvalidArgument("steps: expected an array");
  std::vector<StepRecord> out;
  out.reserve(steps.size());
  std::set<int32_t> seen;
  for (size_t i = 0; i < steps.size(); ++i) {
    Result<StepRecord> step = DecodeStep(steps[i], i);
    if (!step) return step.error();
    // `ID.N` names one step: a repeated N would make it name two.
    if (!seen.insert(step->step).second) {
      return InvalidArgument("steps[" + std::to_string(i) + "].step: " +
                             std::to_string(step->step) + " repeats an earlier step's");
    }
    out.push_back(std::move(*step));
  }
  return out;
}

Result<std::vector<StepRecord>> DecodeSteps(std::string_view text) {
  if (text.empty()) return std::vector<StepRecord>{};
  const json steps = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (steps.is_discarded()) return InvalidArgument("steps: not JSON");
  return DecodeStepsJson(steps);
}

}  // namespace sluice::wire
