#include "wire/step_stream.h"

#include <algorithm>
#include <cmath>

#include "base/base64.h"

namespace sluice::wire {
namespace {

using nlohmann::json;

struct KindName {
  FrameKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {FrameKind::kStdout, "out"}, {FrameKind::kStderr, "err"},   {FrameKind::kStdin, "in"},
    {FrameKind::kStdinEof, "eof"}, {FrameKind::kSignal, "sig"}, {FrameKind::kResize, "winsz"},
    {FrameKind::kExit, "exit"},
};

const char* NameOf(FrameKind kind) {
  for (const KindName& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "out";
}

bool HasData(FrameKind kind) {
  return kind == FrameKind::kStdout || kind == FrameKind::kStderr || kind == FrameKind::kStdin;
}

// An integer member in [lo, hi]; absent or null leaves `out` unset unless `required`.
Status ReadInt(const json& j, const char* key, const std::string& where, bool required,
               int64_t lo, int64_t hi, std::optional<int64_t>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return required ? InvalidArgument(where + "." + key + ": missing") : Status::Ok();
  }
  if (!it->is_number_integer()) return InvalidArgument(where + "." + key + ": expected an integer");
  // JSON's non-negative integers decode as unsigned: both bounds apply to them too (the fuzzer
  // found `"step": 0` taken as an unsigned 0 past the lower bound).
  const bool above = it->is_number_unsigned() ? it->get<uint64_t>() > static_cast<uint64_t>(hi)
                                              : it->get<int64_t>() > hi;
  if (above || (!it->is_number_unsigned() && it->get<int64_t>() < lo) ||
      (it->is_number_unsigned() && lo > 0 && it->get<uint64_t>() < static_cast<uint64_t>(lo))) {
    return InvalidArgument(where + "." + key + ": expected an integer in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]");
  }
  out = it->get<int64_t>();
  return Status::Ok();
}

Status ReadNumber(const json& j, const char* key, const std::string& where,
                  std::optional<double>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
    return InvalidArgument(where + "." + key + ": expected a number >= 0");
  }
  out = it->get<double>();
  return Status::Ok();
}

Status ReadString(const json& j, const char* key, const std::string& where, std::string& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return InvalidArgument(where + "." + key + ": expected a string");
  out = it->get<std::string>();
  return Status::Ok();
}

Status ReadBool(const json& j, const char* key, const std::string& where, bool& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_boolean()) return InvalidArgument(where + "." + key + ": expected true or false");
  out = it->get<bool>();
  return Status::Ok();
}

Result<StepFrame> DecodeFrameAt(const json& j, const std::string& where) {
  if (!j.is_object()) return InvalidArgument(where + ": expected an object");
  std::string name;
  SLUICE_RETURN_IF_ERROR(ReadString(j, "t", where, name));
  const KindName* kind = std::find_if(std::begin(kKinds), std::end(kKinds),
                                      [&](const KindName& k) { return name == k.name; });
  if (kind == std::end(kKinds)) {
    return InvalidArgument(where + ".t: expected out, err, in, eof, sig, winsz or exit, got `" +
                           name + "`");
  }
  StepFrame frame{.kind = kind->kind};
  if (HasData(frame.kind)) {
    std::string text;
    SLUICE_RETURN_IF_ERROR(ReadString(j, "d", where, text));
    if (text.size() > kMaxFrameBytes / 3 * 4 + 4) {
      return InvalidArgument(where + ".d: more than " + std::to_string(kMaxFrameBytes) + " bytes");
    }
    std::optional<std::string> bytes = Base64Decode(text);
    if (!bytes) return InvalidArgument(where + ".d: expected base64");
    frame.data = std::move(*bytes);
  }
  std::optional<int64_t> value;
  switch (frame.kind) {
    case FrameKind::kSignal:
      SLUICE_RETURN_IF_ERROR(ReadInt(j, "n", where, true, 1, 64, value));
      frame.signal = static_cast<int>(*value);
      break;
    case FrameKind::kResize: {
      std::optional<int64_t> rows, cols;
      SLUICE_RETURN_IF_ERROR(ReadInt(j, "rows", where, true, 1, 10000, rows));
      SLUICE_RETURN_IF_ERROR(ReadInt(j, "cols", where, true, 1, 10000, cols));
      frame.rows = static_cast<int>(*rows);
      frame.cols = static_cast<int>(*cols);
      break;
    }
    case FrameKind::kExit: {
      std::optional<int64_t> status, signal;
      SLUICE_RETURN_IF_ERROR(ReadInt(j, "status", where, true, 0, 255, status));
      SLUICE_RETURN_IF_ERROR(ReadInt(j, "signal", where, false, 1, 64, signal));
      frame.exit.status = static_cast<int>(*status);
      if (signal) frame.exit.signal = static_cast<int>(*signal);
      SLUICE_RETURN_IF_ERROR(ReadNumber(j, "cpu_seconds", where, frame.exit.cpu_seconds));
      SLUICE_RETURN_IF_ERROR(ReadNumber(j, "max_rss_mb", where, frame.exit.max_rss_mb));
      SLUICE_RETURN_IF_ERROR(ReadString(j, "error", where, frame.exit.error));
      break;
    }
    default:
      break;
  }
  return frame;
}

json OptionalJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json EncodeFrame(const StepFrame& frame) {
  json j = {{"t", NameOf(frame.kind)}};
  switch (frame.kind) {
    case FrameKind::kStdout:
    case FrameKind::kStderr:
    case FrameKind::kStdin:
      j["d"] = Base64Encode(frame.data);
      break;
    case FrameKind::kSignal:
      j["n"] = frame.signal;
      break;
    case FrameKind::kResize:
      j["rows"] = frame.rows;
      j["cols"] = frame.cols;
      break;
    case FrameKind::kExit:
      j["status"] = frame.exit.status;
      j["signal"] = frame.exit.signal ? json(*frame.exit.signal) : json(nullptr);
      j["cpu_seconds"] = OptionalJson(frame.exit.cpu_seconds);
      j["max_rss_mb"] = OptionalJson(frame.exit.max_rss_mb);
      if (!frame.exit.error.empty()) j["error"] = frame.exit.error;
      break;
    case FrameKind::kStdinEof:
      break;
  }
  return j;
}

json EncodeFrames(const std::vector<StepFrame>& frames) {
  json list = json::array();
  for (const StepFrame& frame : frames) list.push_back(EncodeFrame(frame));
  return list;
}

Result<StepFrame> DecodeFrame(const json& frame) { return DecodeFrameAt(frame, "frame"); }

Result<std::vector<StepFrame>> DecodeFrames(const json& body) {
  if (!body.is_object()) return InvalidArgument("expected an object with `frames`");
  auto it = body.find("frames");
  if (it == body.end() || !it->is_array()) return InvalidArgument("frames: expected an array");
  if (it->size() > kMaxFramesPerMessage) {
    return InvalidArgument("frames: more than " + std::to_string(kMaxFramesPerMessage));
  }
  std::vector<StepFrame> frames;
  frames.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    Result<StepFrame> frame = DecodeFrameAt((*it)[i], "frames[" + std::to_string(i) + "]");
    if (!frame) return frame.error();
    frames.push_back(std::move(*frame));
  }
  return frames;
}

json EncodePage(const StepPage& page) {
  return {{"frames", EncodeFrames(page.frames)}, {"next", page.next}, {"end", page.end}};
}

Result<StepPage> DecodePage(const json& body) {
  Result<std::vector<StepFrame>> frames = DecodeFrames(body);
  if (!frames) return frames.error();
  StepPage page{.frames = std::move(*frames)};
  std::optional<int64_t> next;
  SLUICE_RETURN_IF_ERROR(ReadInt(body, "next", "page", true, 0, INT64_MAX, next));
  page.next = *next;
  SLUICE_RETURN_IF_ERROR(ReadBool(body, "end", "page", page.end));
  return page;
}

json EncodeStepOrder(const StepOrder& o) {
  json j = {{"job", o.job},         {"step", o.step}, {"command", o.command}, {"env", o.env},
            {"account", o.account}, {"cwd", o.cwd},   {"pty", o.pty},         {"rows", o.rows},
            {"cols", o.cols}};
  j["umask"] = o.umask ? json(*o.umask) : json(nullptr);
  j["mem_limit_mb"] = o.mem_limit_mb ? json(*o.mem_limit_mb) : json(nullptr);
  j["cpu_limit"] = o.cpu_limit ? json(*o.cpu_limit) : json(nullptr);
  EncodeGpuBinding(o.gpus, j);
  return j;
}

Result<StepOrder> DecodeStepOrder(const json& j) {
  const std::string where = "steps[]";
  if (!j.is_object()) return InvalidArgument(where + ": expected an object");
  StepOrder o;
  std::optional<int64_t> job, step, rows, cols, umask, mem, cpus;
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "job", where, true, 1, INT64_MAX, job));
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "step", where, true, 1, INT64_MAX, step));
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "rows", where, false, 0, 10000, rows));
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "cols", where, false, 0, 10000, cols));
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "umask", where, false, 0, 0777, umask));
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "mem_limit_mb", where, false, 1, INT64_MAX, mem));
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "cpu_limit", where, false, 1, 1 << 20, cpus));
  SLUICE_RETURN_IF_ERROR(ReadString(j, "command", where, o.command));
  SLUICE_RETURN_IF_ERROR(ReadString(j, "account", where, o.account));
  SLUICE_RETURN_IF_ERROR(ReadString(j, "cwd", where, o.cwd));
  SLUICE_RETURN_IF_ERROR(ReadBool(j, "pty", where, o.pty));
  auto env = j.find("env");
  if (env != j.end() && !env->is_null()) {
    if (!env->is_object()) return InvalidArgument(where + ".env: expected an object");
    for (const auto& [key, value] : env->items()) {
      if (!value.is_string()) return InvalidArgument(where + ".env." + key + ": expected a string");
      o.env[key] = value.get<std::string>();
    }
  }
  o.job = *job;
  o.step = *step;
  o.rows = static_cast<int>(rows.value_or(0));
  o.cols = static_cast<int>(cols.value_or(0));
  if (umask) o.umask = static_cast<int>(*umask);
  o.mem_limit_mb = mem;
  if (cpus) o.cpu_limit = static_cast<int>(*cpus);
  Result<GpuBinding> gpus = DecodeGpuBinding(j, where);
  if (!gpus) return gpus.error();
  o.gpus = std::move(*gpus);
  return o;
}

json EncodeStepKill(const StepKill& kill) { return {{"job", kill.job}, {"step", kill.step}}; }

Result<StepKill> DecodeStepKill(const json& j) {
  const std::string where = "step_kill[]";
  if (!j.is_object()) return InvalidArgument(where + ": expected an object");
  std::optional<int64_t> job, step;
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "job", where, true, 1, INT64_MAX, job));
  SLUICE_RETURN_IF_ERROR(ReadInt(j, "step", where, false, 0, INT64_MAX, step));
  return StepKill{.job = *job, .step = step.value_or(0)};
}

std::string StepId(int64_t job, int64_t step) {
  return std::to_string(job) + "." + std::to_string(step);
}

}  // namespace sluice::wire
