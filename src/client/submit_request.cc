#include "client/submit_request.h"

#include "client/compat/gpu_request.h"
#include "client/text_fields.h"

#include <charconv>
#include <ctime>

namespace sluice::client {
namespace {

using nlohmann::json;

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}


// "90s", "10m", "2h", "1d" -> seconds.
std::optional<int64_t> ParseDurationWithUnit(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return std::nullopt;
  }
  auto value = ParseInt(text.substr(0, text.size() - 1));
  if (!value || *value < 0) return std::nullopt;
  return *value * unit;
}

std::optional<int64_t> LocalTime(int year, int month, int day, int hour, int minute, int second) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == -1) return std::nullopt;
  return static_cast<int64_t>(t);
}

// The request with --gpu's section appended.
Result<std::string> ResreqWithGpu(const SubmitFlags& flags) {
  if (flags.gpu.empty()) return flags.resreq;
  Result<std::string> section = compat::LsfGpuSection(flags.gpu);
  if (!section) {
    return Status(section.error().code(), "--gpu " + flags.gpu + ": " + section.error().message());
  }
  Result<std::string> resreq = compat::WithGpuSection(flags.resreq, *section);
  if (!resreq) return Status(resreq.error().code(), "--gpu: " + resreq.error().message());
  return resreq;
}

std::string Absolute(const std::string& path, const std::string& dir) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  return dir + (dir.back() == '/' ? "" : "/") + path;
}

}  // namespace

Result<int64_t> ParseRunLimit(const std::string& text) {
  const auto bad = [&] {
    return InvalidArgument("-W " + text +
                           ": expected MINUTES, HOURS:MINUTES, H:M:S or a number with s/m/h/d");
  };
  std::optional<int64_t> seconds = ParseDurationWithUnit(text);
  if (!seconds) {
    std::vector<std::string_view> parts = SplitFields(text, ':');
    if (parts.size() > 3) return bad();
    int64_t total = 0;
    // MINUTES; HOURS:MINUTES; H:M:S.
    const int64_t scale[3][3] = {{60, 0, 0}, {3600, 60, 0}, {3600, 60, 1}};
    for (size_t i = 0; i < parts.size(); ++i) {
      auto value = ParseInt(parts[i]);
      if (!value || *value < 0) return bad();
      total += *value * scale[parts.size() - 1][i];
    }
    seconds = total;
  }
  if (*seconds <= 0) return InvalidArgument("-W " + text + ": the run limit must be positive");
  return *seconds;
}

Result<int64_t> ParseBeginTime(const std::string& text, int64_t now) {
  const auto bad = [&] {
    return InvalidArgument("-b " + text +
                           ": expected epoch seconds, +DURATION, HH:MM or YYYY-MM-DD[THH:MM[:SS]]");
  };
  if (text.empty()) return bad();
  if (text.front() == '+') {
    std::string_view rest = std::string_view(text).substr(1);
    auto seconds = ParseDurationWithUnit(rest);
    if (!seconds) seconds = ParseInt(rest);
    if (!seconds || *seconds < 0) return bad();
    return now + *seconds;
  }
  if (auto epoch = ParseInt(text)) return *epoch;
  std::tm today{};
  const std::time_t now_t = static_cast<std::time_t>(now);
  localtime_r(&now_t, &today);
  if (text.size() == 5 && text[2] == ':') {  // HH:MM
    auto hour = ParseInt(std::string_view(text).substr(0, 2));
    auto minute = ParseInt(std::string_view(text).substr(3, 2));
    if (!hour || !minute || *hour > 23 || *minute > 59) return bad();
    auto at = LocalTime(today.tm_year + 1900, today.tm_mon + 1, today.tm_mday,
                        static_cast<int>(*hour), static_cast<int>(*minute), 0);
    if (!at) return bad();
    if (*at <= now) {
      at = LocalTime(today.tm_year + 1900, today.tm_mon + 1, today.tm_mday + 1,
                     static_cast<int>(*hour), static_cast<int>(*minute), 0);
    }
    return *at;
  }
  // YYYY-MM-DD[THH:MM[:SS]]
  std::vector<std::string_view> date_time = SplitFields(text, 'T');
  if (date_time.size() > 2) return bad();
  std::vector<std::string_view> date = SplitFields(date_time[0], '-');
  if (date.size() != 3) return bad();
  int fields[6] = {0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < 3; ++i) {
    auto value = ParseInt(date[i]);
    if (!value) return bad();
    fields[i] = static_cast<int>(*value);
  }
  if (date_time.size() == 2) {
    std::vector<std::string_view> clock = SplitFields(date_time[1], ':');
    if (clock.size() < 2 || clock.size() > 3) return bad();
    for (size_t i = 0; i < clock.size(); ++i) {
      auto value = ParseInt(clock[i]);
      if (!value) return bad();
      fields[3 + i] = static_cast<int>(*value);
    }
  }
  if (fields[1] < 1 || fields[1] > 12 || fields[2] < 1 || fields[2] > 31 || fields[3] > 23 ||
      fields[4] > 59 || fields[5] > 60) {
    return bad();
  }
  auto at = LocalTime(fields[0], fields[1], fields[2], fields[3], fields[4], fields[5]);
  if (!at) return bad();
  return *at;
}

Result<json> BuildSubmitBody(const SubmitFlags& flags, const std::string& submit_dir, int64_t now) {
  json body = json::object();
  if (flags.script) {
    body["script"] = *flags.script;  // R-UX-1: the command is the script's name and arguments
    body["command"] = flags.command.empty() ? std::vector<std::string>{"script"} : flags.command;
  } else if (flags.command.empty()) {
    return InvalidArgument("no command: `sluice submit [flags] -- CMD...` or `sluice submit FILE`");
  } else if (flags.command.size() == 1) {
    body["command"] = flags.command.front();
  } else {
    body["command"] = flags.command;
  }
  if (!flags.queue.empty()) body["queue"] = flags.queue;
  // R-UX-3: `--array SPEC`, or LSF's `-J 'name[1-50]%5'` (--array wins over the brackets).
  std::string name = flags.name;
  std::string array = flags.array;
  if (const size_t open = name.find('['); open != std::string::npos) {
    const size_t close = name.find(']', open);
    if (close == std::string::npos) {
      return InvalidArgument("-J " + name + ": expected NAME or NAME[INDEXES]%LIMIT");
    }
    if (array.empty()) array = name.substr(open + 1, close - open - 1) + name.substr(close + 1);
    name.resize(open);
  }
  if (!name.empty()) body["name"] = name;
  if (!array.empty()) body["array"] = array;
  if (!flags.tasks.empty()) {
    std::vector<std::string_view> parts = SplitFields(flags.tasks, ',');
    auto min = ParseInt(parts[0]);
    auto max = parts.size() == 2 ? ParseInt(parts[1]) : min;
    if (parts.size() > 2 || !min || !max || *min < 1 || *max < *min) {
      return InvalidArgument("-n " + flags.tasks + ": expected N or MIN,MAX with 1 <= MIN <= MAX");
    }
    if (*min == *max) {
      body["tasks"] = *min;
    } else {
      body["min_tasks"] = *min;
      body["max_tasks"] = *max;
    }
  }
  Result<std::string> resreq = ResreqWithGpu(flags);
  if (!resreq) return resreq.error();
  if (!resreq->empty()) body["resreq"] = *resreq;
  if (!flags.run_limit.empty()) {
    Result<int64_t> limit = ParseRunLimit(flags.run_limit);
    if (!limit) return limit.error();
    body["run_limit"] = *limit;
  }
  if (!flags.begin.empty()) {
    Result<int64_t> begin = ParseBeginTime(flags.begin, now);
    if (!begin) return begin.error();
    body["begin"] = *begin;
  }
  if (!flags.depend.empty()) body["depend"] = flags.depend;
  if (flags.exclusive) body["exclusive"] = true;
  if (flags.hold) body["hold"] = true;
  if (!flags.project.empty()) body["project"] = flags.project;
  if (!flags.reservation.empty()) body["reservation"] = flags.reservation;
  if (flags.priority) body["priority"] = *flags.priority;
  const std::string cwd = flags.cwd.empty() ? submit_dir : Absolute(flags.cwd, submit_dir);
  if (!cwd.empty()) body["cwd"] = cwd;
  if (!flags.output.empty()) body["output"] = Absolute(flags.output, cwd);
  if (!flags.error.empty()) body["error"] = Absolute(flags.error, cwd);
  if (flags.env) {
    body["env"] = *flags.env;
  } else {
    Result<json> env = ExportedEnvironment(flags.export_env, flags.environment);
    if (!env) return env.error();
    if (!env->empty()) body["env"] = std::move(*env);
  }
  if (flags.umask) body["umask"] = *flags.umask;
  return body;
}

Result<json> ExportedEnvironment(const std::string& export_env,
                                 const std::map<std::string, std::string>& environment) {
  json env = json::object();
  const auto all = [&] {
    for (const auto& [name, value] : environment) env[name] = value;
  };
  if (export_env.empty() || export_env == "ALL") {
    all();
    return env;
  }
  if (export_env == "NONE") return env;
  for (std::string_view item : SplitFields(export_env, ',')) {
    if (item == "ALL") {
      all();
      continue;
    }
    const size_t eq = item.find('=');
    const std::string name(item.substr(0, eq));
    if (name.empty() || name == "NONE") {
      return InvalidArgument("--export " + export_env +
                             ": expected ALL, NONE or [ALL,]VAR[=VALUE],...");
    }
    if (eq != std::string_view::npos) {
      env[name] = std::string(item.substr(eq + 1));
    } else if (auto it = environment.find(name); it != environment.end()) {
      env[name] = it->second;
    }
  }
  return env;
}

}  // namespace sluice::client
