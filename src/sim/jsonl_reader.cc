#include "sim/jsonl_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "base/array_ids.h"
#include "core/model/dependency.h"
#include "core/model/job_array.h"
#include "core/resreq/parser.h"
#include "sim/jsonl_reservation.h"
#include "sim/swf_reader.h"

namespace sluice::sim {
namespace {

using Json = nlohmann::json;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// The file and line an error points at.
struct Location {
  std::string_view filename;
  int64_t line = 0;

  Status Error(std::string_view field, std::string_view what) const {
    return InvalidArgument(fmt::format("{}:{}: {}: {}", filename, line, field, what));
  }
};

// One line's job, plus which keys were present (for defaults and cross-field checks).
struct LineFields {
  WorkloadJob job;
  bool has_id = false;
  bool has_submit = false;
  bool has_runtime = false;
  bool has_tasks = false;
  bool has_min_tasks = false;
  bool has_max_tasks = false;
  std::vector<JobId> depends_on;  // the ids `depend` names
  std::string gpu_section;        // `gpus` as a gpu[...] section; empty: no `gpus` key
  std::optional<core::AdvanceReservationSpec> reservation;  // a reservation line's
};

std::string RangeText(int64_t min, int64_t max) {
  if (min == kInt64Min && max == kInt64Max) return "";
  if (max == kInt64Max) return fmt::format(" >= {}", min);
  return fmt::format(" in [{}, {}]", min, max);
}

// Reads an integer in [min, max]; floats (even 3.0), strings, booleans and null are refused.
Status ReadInteger(const Json& value, const Location& at, std::string_view field, int64_t min,
                   int64_t max, int64_t& out) {
  const std::string expected = "expected an integer" + RangeText(min, max);
  int64_t v = 0;
  if (value.is_number_unsigned()) {  // nlohmann::json stores every integer >= 0 as unsigned
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(max)) {
      return at.Error(field, fmt::format("{}, got {}", expected, u));
    }
    v = static_cast<int64_t>(u);
  } else if (value.is_number_integer()) {
    v = value.get<int64_t>();
  } else {
    return at.Error(field, expected);
  }
  if (v < min || v > max) return at.Error(field, fmt::format("{}, got {}", expected, v));
  out = v;
  return Status::Ok();
}

Status ReadInt32(const Json& value, const Location& at, std::string_view field, int64_t min,
                 int32_t& out) {
  int64_t v = 0;
  SLUICE_RETURN_IF_ERROR(ReadInteger(value, at, field, min, kInt32Max, v));
  out = static_cast<int32_t>(v);
  return Status::Ok();
}

// Into a std::string or an InternedText (the spec's user, project, queue and reservation).
template <typename Text>
Status ReadString(const Json& value, const Location& at, std::string_view field, Text& out) {
  if (!value.is_string()) return at.Error(field, "expected a string");
  out = value.get<std::string>();
  return Status::Ok();
}

Status ReadBool(const Json& value, const Location& at, std::string_view field, bool& out) {
  if (!value.is_boolean()) return at.Error(field, "expected true or false");
  out = value.get<bool>();
  return Status::Ok();
}

// `gpus`: an integer N (`gpu[num=N]`) or LSF -gpu text (`gpu[TEXT]`; `-`, bsub's "the
// defaults", is `gpu[]`). The text is parsed here so that its errors name this key, with
// columns counted in the string.
Status ReadGpus(const Json& value, const Location& at, std::string& section) {
  const std::string expected =
      fmt::format("expected an integer in [1, {}] or a -gpu string", core::resreq::kMaxGpuNum);
  if (value.is_number_integer()) {  // a float falls through to the type error
    int64_t num = 0;
    SLUICE_RETURN_IF_ERROR(ReadInteger(value, at, "gpus", 1, core::resreq::kMaxGpuNum, num));
    section = fmt::format("gpu[num={}]", num);
    return Status::Ok();
  }
  if (!value.is_string()) return at.Error("gpus", expected);
  const std::string text = value.get<std::string>();
  if (text.empty()) return at.Error("gpus", expected + ", got an empty string");
  // A bracket would end the section early and let the string add other sections.
  if (text.find_first_of("[]") != std::string::npos) {
    return at.Error("gpus", "expected -gpu text without '[' or ']'");
  }
  section = text == "-" ? "gpu[]" : "gpu[" + text + "]";
  constexpr int32_t kOpening = 4;  // "gpu["
  core::resreq::ExprPool pool;
  core::resreq::ParseError error;
  if (!core::resreq::Parse(section, pool, &error)) {
    return at.Error("gpus", fmt::format("column {}: {}", error.column - kOpening, error.message));
  }
  return Status::Ok();
}

// Adds the `gpus` section to the request: after a plain request, or as the whole request.
// Only when `resreq` parses alone is the sum checked (otherwise the core reports resreq's own
// error at submission, as without `gpus`): it fails when resreq has a gpu[] already, or is a
// compound or alternatives, whose parts must each say gpu[].
Status AddGpuSection(const Location& at, LineFields& f) {
  std::string& resreq = f.job.spec.resreq;
  if (f.gpu_section.empty()) return Status::Ok();
  if (resreq.find_first_not_of(' ') == std::string::npos) {
    resreq = f.gpu_section;
    return Status::Ok();
  }
  core::resreq::ExprPool pool;
  const bool plain = core::resreq::Parse(resreq, pool).has_value();
  std::string sum = resreq + " " + f.gpu_section;
  if (plain) {
    Result<core::resreq::Request> request = core::resreq::Parse(sum, pool);
    if (!request) {
      return at.Error("gpus", fmt::format("expected a resreq without gpu[], compounds or "
                                          "alternatives to add {} to ({})",
                                          f.gpu_section, request.error().message()));
    }
  }
  resreq = std::move(sum);
  return Status::Ok();
}

using KeyReader = Status (*)(const Json&, const Location&, LineFields&);

struct KeyEntry {
  std::string_view key;
  KeyReader read;
};

// One reader per R-SIM-4 key.
constexpr KeyEntry kKeys[] = {
    {"id",
     [](const Json& v, const Location& at, LineFields& f) {
       f.has_id = true;
       return ReadInteger(v, at, "id", 1, kInt64Max, f.job.spec.id);
     }},
    {"submit",
     [](const Json& v, const Location& at, LineFields& f) {
       f.has_submit = true;
       return ReadInteger(v, at, "submit", 0, kInt64Max, f.job.spec.submit_time);
     }},
    {"runtime",
     [](const Json& v, const Location& at, LineFields& f) {
       f.has_runtime = true;
       return ReadInteger(v, at, "runtime", 0, kInt64Max, f.job.runtime);
     }},
    {"user", [](const Json& v, const Location& at,
                LineFields& f) { return ReadString(v, at, "user", f.job.spec.user); }},
    {"project", [](const Json& v, const Location& at,
                   LineFields& f) { return ReadString(v, at, "project", f.job.spec.project); }},
    {"queue", [](const Json& v, const Location& at,
                 LineFields& f) { return ReadString(v, at, "queue", f.job.spec.queue); }},
    {"gpus", [](const Json& v, const Location& at,
                LineFields& f) { return ReadGpus(v, at, f.gpu_section); }},
    {"resreq", [](const Json& v, const Location& at,
                  LineFields& f) { return ReadString(v, at, "resreq", f.job.spec.resreq); }},
    {"name", [](const Json& v, const Location& at,
                LineFields& f) { return ReadString(v, at, "name", f.job.spec.name); }},
    {"command", [](const Json& v, const Location& at,
                   LineFields& f) { return ReadString(v, at, "command", f.job.spec.command); }},
    {"tasks",
     [](const Json& v, const Location& at, LineFields& f) {
       f.has_tasks = true;
       SLUICE_RETURN_IF_ERROR(ReadInt32(v, at, "tasks", 1, f.job.spec.min_tasks));
       f.job.spec.max_tasks = f.job.spec.min_tasks;
       return Status::Ok();
     }},
    {"min_tasks",
     [](const Json& v, const Location& at, LineFields& f) {
       f.has_min_tasks = true;
       return ReadInt32(v, at, "min_tasks", 1, f.job.spec.min_tasks);
     }},
    {"max_tasks",
     [](const Json& v, const Location& at, LineFields& f) {
       f.has_max_tasks = true;
       return ReadInt32(v, at, "max_tasks", 1, f.job.spec.max_tasks);
     }},
    {"run_limit",
     [](const Json& v, const Location& at, LineFields& f) {
       if (v.is_null()) return Status::Ok();
       int64_t limit = 0;
       SLUICE_RETURN_IF_ERROR(ReadInteger(v, at, "run_limit", 0, kInt64Max, limit));
       f.job.spec.run_limit = limit;
       return Status::Ok();
     }},
    {"priority",
     [](const Json& v, const Location& at, LineFields& f) {
       return ReadInt32(v, at, "priority", kInt32Min, f.job.spec.priority);
     }},
    {"begin",
     [](const Json& v, const Location& at, LineFields& f) {
       return ReadInteger(v, at, "begin", 0, kInt64Max, f.job.spec.begin_time);
     }},
    {"depend",
     [](const Json& v, const Location& at, LineFields& f) {
       SLUICE_RETURN_IF_ERROR(ReadString(v, at, "depend", f.job.spec.depend));
       if (f.job.spec.depend.empty()) return Status::Ok();
       Result<core::Dependency> dependency = core::Dependency::Parse(f.job.spec.depend);
       if (!dependency) return at.Error("depend", dependency.error().message());
       f.depends_on = dependency->jobs();
       return Status::Ok();
     }},
    {"array",
     [](const Json& v, const Location& at, LineFields& f) {
       SLUICE_RETURN_IF_ERROR(ReadString(v, at, "array", f.job.array));
       if (f.job.array.empty()) return Status::Ok();
       Result<core::ArraySpec> array = core::ParseArraySpec(f.job.array);
       if (!array) return at.Error("array", array.error().message());
       return Status::Ok();
     }},
    {"exclusive", [](const Json& v, const Location& at,
                     LineFields& f) { return ReadBool(v, at, "exclusive", f.job.spec.exclusive); }},
    {"hold", [](const Json& v, const Location& at,
                LineFields& f) { return ReadBool(v, at, "hold", f.job.spec.hold); }},
    {"release_at",
     [](const Json& v, const Location& at, LineFields& f) {
       if (v.is_null()) return Status::Ok();
       int64_t when = 0;
       SLUICE_RETURN_IF_ERROR(ReadInteger(v, at, "release_at", 0, kInt64Max, when));
       f.job.release_at = when;
       return Status::Ok();
     }},
    {"reservation", [](const Json& v, const Location& at,
                       LineFields& f) { return ReadString(v, at, "reservation", f.job.spec.reservation); }},
    {"cancel_at",
     [](const Json& v, const Location& at, LineFields& f) {
       if (v.is_null()) return Status::Ok();
       int64_t when = 0;
       SLUICE_RETURN_IF_ERROR(ReadInteger(v, at, "cancel_at", 0, kInt64Max, when));
       f.job.cancel_at = when;
       return Status::Ok();
     }},
};

KeyReader FindReader(std::string_view key) {
  for (const KeyEntry& entry : kKeys) {
    if (entry.key == key) return entry.read;
  }
  return nullptr;
}

// Required keys, the rules that span several keys, and `gpus` added to `resreq`.
Status CheckLine(const Location& at, LineFields& f) {
  if (!f.has_id) return at.Error("id", "required key is missing");
  if (!f.has_submit) return at.Error("submit", "required key is missing");
  if (!f.has_runtime) return at.Error("runtime", "required key is missing");
  if (f.has_tasks && (f.has_min_tasks || f.has_max_tasks)) {
    return at.Error("tasks", "expected either tasks or min_tasks/max_tasks, not both");
  }
  core::JobSpec& spec = f.job.spec;
  if (f.job.release_at && !spec.hold) return at.Error("release_at", "expected hold: true with it");
  if (!f.job.array.empty() && (f.job.release_at || f.job.cancel_at)) {
    return at.Error("array", "expected no release_at or cancel_at with an array");
  }
  if (!f.job.array.empty() && spec.id > kMaxArrayJobId) {
    return at.Error("id", fmt::format("expected an array id <= {}", kMaxArrayJobId));
  }
  if (f.has_min_tasks && !f.has_max_tasks) spec.max_tasks = spec.min_tasks;
  if (spec.min_tasks > spec.max_tasks) {
    return at.Error("min_tasks", fmt::format("expected min_tasks <= max_tasks, got {} > {}",
                                             spec.min_tasks, spec.max_tasks));
  }
  return AddGpuSection(at, f);
}

// Parses one non-blank line into `f`.
Status ParseLine(std::string_view line, const Location& at, LineFields& f) {
  Json object;
  try {
    object = Json::parse(line);
  } catch (const Json::parse_error& e) {
    return at.Error("json", fmt::format("expected valid json (error at byte {})", e.byte));
  } catch (const Json::out_of_range&) {  // e.g. 1e999: "number overflow"
    return at.Error("json", "expected valid json (a number is out of range)");
  } catch (const Json::exception&) {
    return at.Error("json", "expected valid json");
  }
  if (!object.is_object()) return at.Error("json", "expected an object");
  // A reservation line: its one key holds an object (a job's `reservation` is a string).
  if (object.size() == 1 && object.contains("reservation") && object["reservation"].is_object()) {
    Result<core::AdvanceReservationSpec> spec = ParseReservationLine(object["reservation"]);
    if (!spec) return InvalidArgument(fmt::format("{}:{}: {}", at.filename, at.line,
                                                  spec.error().message()));
    f.reservation = std::move(spec).value();
    return Status::Ok();
  }
  // nlohmann::json keeps object keys sorted, so keys are checked in alphabetical order.
  for (const auto& [key, value] : object.items()) {
    KeyReader read = FindReader(key);
    if (read == nullptr) return at.Error(key, "unknown key");
    SLUICE_RETURN_IF_ERROR(read(value, at, f));
  }
  return CheckLine(at, f);
}

bool IsBlankLine(std::string_view line) {
  return line.find_first_not_of(" \t\r\v\f") == std::string_view::npos;
}

}  // namespace

Result<Workload> ParseJsonl(std::string_view text, std::string_view filename,
                            const JsonlOptions& options) {
  Workload workload;
  std::unordered_map<JobId, int64_t> line_of_id;                // lookups only; never iterated
  std::vector<std::pair<int64_t, std::vector<JobId>>> depends;  // (line, named ids)
  int64_t line_number = 0;
  size_t pos = 0;
  try {
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_number;
      if (IsBlankLine(line)) continue;
      const Location at{filename, line_number};
      LineFields fields;
      fields.job.line = line_number;
      SLUICE_RETURN_IF_ERROR(ParseLine(line, at, fields));
      if (fields.reservation) {
        workload.reservations.push_back(std::move(*fields.reservation));
        continue;
      }
      const auto [it, inserted] = line_of_id.emplace(fields.job.spec.id, line_number);
      if (!inserted) {
        return at.Error("id", fmt::format("expected a unique id, {} is already on line {}",
                                          fields.job.spec.id, it->second));
      }
      if (!fields.depends_on.empty())
        depends.emplace_back(line_number, std::move(fields.depends_on));
      workload.jobs.push_back(std::move(fields.job));
    }
  } catch (const Json::exception& e) {
    // Not expected: every value is type-checked before it is read.
    return Internal(fmt::format("{}:{}: json: {}", filename, line_number, e.what()));
  }
  // A dependency names jobs of the same file (LSF refuses unknown ids at submission).
  for (const auto& [line, named] : depends) {
    for (JobId id : named) {
      if (!line_of_id.contains(ArrayIdOf(id))) {
        return Location{filename, line}.Error("depend",
                                              fmt::format("no job {} in the workload", id));
      }
    }
  }
  std::stable_sort(workload.jobs.begin(), workload.jobs.end(),
                   [](const WorkloadJob& a, const WorkloadJob& b) {
                     return a.spec.submit_time < b.spec.submit_time;
                   });
  if (options.max_jobs >= 0 && static_cast<uint64_t>(options.max_jobs) < workload.jobs.size()) {
    workload.jobs.resize(static_cast<size_t>(options.max_jobs));
  }
  return workload;
}

Result<Workload> ReadJsonl(const std::string& path, const JsonlOptions& options) {
  Result<std::string> text = ReadMaybeGzipFile(path);
  if (!text) return text.error();
  return ParseJsonl(*text, path, options);
}

}  // namespace sluice::sim
