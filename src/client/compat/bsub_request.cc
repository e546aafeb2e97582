#include "client/compat/bsub_request.h"

#include <charconv>
#include <ctime>

#include "client/compat/gpu_request.h"
#include "client/compat/memory.h"
#include "client/compat/options.h"

namespace sluice::client::compat {
namespace {

enum Opt {
  kTasks,
  kQueue,
  kRunLimit,
  kName,
  kOutput,
  kError,
  kResreq,
  kMemLimit,
  kGpu,
  kExclusive,
  kDepend,
  kBegin,
  kProject,
  kHold,
  kCwd,
  kPriority,
  kEnv,
  kWait,
  kReservation,
  kIgnoredFlag,
  kIgnoredValue,
  kRefusedFlag,
  kRefusedValue,
  kInteractive,
  kInteractivePty,
  kRefusedInteractive,
};

constexpr OptionSpec kOptions[] = {
    {"-n", "", true, kTasks},          {"-q", "", true, kQueue},
    {"-W", "", true, kRunLimit},       {"-J", "", true, kName},
    {"-o", "", true, kOutput},         {"-oo", "", true, kOutput},
    {"-e", "", true, kError},          {"-eo", "", true, kError},
    {"-R", "", true, kResreq},         {"-M", "", true, kMemLimit},
    {"-x", "", false, kExclusive},     {"-w", "", true, kDepend},
    {"-b", "", true, kBegin},          {"-P", "", true, kProject},
    {"-H", "", false, kHold},          {"-cwd", "", true, kCwd},
    {"-sp", "", true, kPriority},      {"-env", "", true, kEnv},
    {"-K", "", false, kWait},          {"-u", "", true, kIgnoredValue},
    {"-N", "", false, kIgnoredFlag},   {"-B", "", false, kIgnoredFlag},
    {"-r", "", false, kIgnoredFlag},   {"-rn", "", false, kIgnoredFlag},
    {"-We", "", true, kIgnoredValue},  {"-Jd", "", true, kIgnoredValue},
    {"-ti", "", false, kIgnoredFlag},  {"-m", "", true, kRefusedValue},
    {"-G", "", true, kRefusedValue},   {"-app", "", true, kRefusedValue},
    {"-c", "", true, kRefusedValue},   {"-i", "", true, kRefusedValue},
    {"-is", "", true, kRefusedValue},  {"-E", "", true, kRefusedValue},
    {"-Ep", "", true, kRefusedValue},  {"-a", "", true, kRefusedValue},
    {"-g", "", true, kRefusedValue},   {"-L", "", true, kRefusedValue},
    {"-T", "", true, kRefusedValue},   {"-v", "", true, kRefusedValue},
    {"-p", "", true, kRefusedValue},   {"-F", "", true, kRefusedValue},
    {"-D", "", true, kRefusedValue},   {"-S", "", true, kRefusedValue},
    {"-C", "", true, kRefusedValue},   {"-t", "", true, kRefusedValue},
    {"-s", "", true, kRefusedValue},   {"-U", "", true, kReservation},
    {"-sla", "", true, kRefusedValue}, {"-pack", "", true, kRefusedValue},
    {"-jsdl", "", true, kRefusedValue}, {"-k", "", true, kRefusedValue},
    {"-f", "", true, kRefusedValue},   {"-ext", "", true, kRefusedValue},
    {"-gpu", "", true, kGpu},          {"-Lp", "", true, kRefusedValue},
    {"-data", "", true, kRefusedValue}, {"-I", "", false, kInteractive},
    {"-Ip", "", false, kInteractivePty}, {"-Is", "", false, kInteractivePty},
    {"-IS", "", false, kRefusedInteractive}, {"-ISp", "", false, kRefusedInteractive},
    {"-ISs", "", false, kRefusedInteractive}, {"-IX", "", false, kRefusedInteractive},
    {"-Zs", "", false, kRefusedFlag},
};

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// LSF's [[[YYYY:]MM:]DD:]hh:mm -> Sluice's YYYY-MM-DDTHH:MM (local time); Sluice's own forms
// (and hh:mm) stay as they are.
Result<std::string> TranslateLsfBegin(const std::string& value, int64_t now) {
  if (ParseBeginTime(value, now)) return value;
  std::vector<int64_t> fields;
  std::string_view rest = value;
  while (true) {
    const size_t colon = rest.find(':');
    const auto field = ParseInt(rest.substr(0, colon));
    if (!field || *field < 0) return InvalidArgument("expected [[[YYYY:]MM:]DD:]hh:mm");
    fields.push_back(*field);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (fields.size() < 2 || fields.size() > 5) return InvalidArgument("expected [[[YYYY:]MM:]DD:]hh:mm");
  const std::time_t t = static_cast<std::time_t>(now);
  std::tm today{};
  localtime_r(&t, &today);
  int64_t date[3] = {today.tm_year + 1900, today.tm_mon + 1, today.tm_mday};
  const size_t date_fields = fields.size() - 2;
  for (size_t i = 0; i < date_fields; ++i) date[3 - date_fields + i] = fields[i];
  const auto two = [](int64_t v) { return (v < 10 ? "0" : "") + std::to_string(v); };
  const std::string iso = std::to_string(date[0]) + "-" + two(date[1]) + "-" + two(date[2]) + "T" +
                          two(fields[date_fields]) + ":" + two(fields[date_fields + 1]);
  if (!ParseBeginTime(iso, now)) return InvalidArgument("expected [[[YYYY:]MM:]DD:]hh:mm");
  return iso;
}

std::optional<std::string>* TextField(int id, BsubRequest& r) {
  switch (id) {
    case kQueue:
      return &r.queue;
    case kName:
      return &r.name;
    case kOutput:
      return &r.output;
    case kError:
      return &r.error;
    case kProject:
      return &r.project;
    case kCwd:
      return &r.cwd;
    case kDepend:
      return &r.depend;
    case kEnv:
      return &r.env_spec;
    case kReservation:
      return &r.reservation;
    default:
      return nullptr;
  }
}

Status Refused(const ParsedOption& option, const std::string& why) {
  return Status(StatusCode::kFailedPrecondition, option.written + ": " + why);
}

Status ApplyValue(const ParsedOption& option, int64_t now, BsubRequest& r) {
  const std::string& value = option.value;
  switch (option.id) {
    case kTasks: {
      const size_t comma = value.find(',');
      const auto min = ParseInt(value.substr(0, comma));
      const auto max = comma == std::string::npos ? min : ParseInt(value.substr(comma + 1));
      if (!min || !max || *min < 1 || *max < *min) {
        return InvalidArgument(option.written + " " + value + ": expected N or MIN,MAX");
      }
      r.tasks = value;
      return Status::Ok();
    }
    case kRunLimit:
      if (!ParseRunLimit(value)) {
        return InvalidArgument(option.written + " " + value + ": expected [hour:]minute");
      }
      r.run_limit = value;
      return Status::Ok();
    case kResreq:
      r.resreq.push_back(value);
      return Status::Ok();
    case kMemLimit: {
      Result<int64_t> mb = ParseMemoryMb(value, MemoryDialect::kLsf);
      if (!mb) return InvalidArgument(option.written + " " + value + ": " + mb.error().message());
      r.mem_limit_mb = *mb;
      return Status::Ok();
    }
    case kGpu: {
      // Translated now, so that a bad value names its #BSUB line; placed in ToSubmitFlags.
      Result<std::string> section = LsfGpuSection(value);
      if (!section) {
        return Status(section.error().code(),
                      option.written + " " + value + ": " + section.error().message());
      }
      r.gpu = *section;
      return Status::Ok();
    }
    case kBegin: {
      Result<std::string> begin = TranslateLsfBegin(value, now);
      if (!begin) return InvalidArgument(option.written + " " + value + ": " + begin.error().message());
      r.begin = *begin;
      return Status::Ok();
    }
    case kPriority: {
      const auto priority = ParseInt(value);
      if (!priority) return InvalidArgument(option.written + " " + value + ": expected an integer");
      r.priority = *priority;
      return Status::Ok();
    }
    default:
      break;
  }
  std::optional<std::string>* field = TextField(option.id, r);
  if (field == nullptr) return Status::Ok();
  if (value.empty()) return InvalidArgument(option.written + ": expected a non-empty value");
  *field = value;
  return Status::Ok();
}

Status Apply(const ParsedOption& option, int64_t now, BsubRequest& r) {
  switch (option.id) {
    case kExclusive:
      r.exclusive = true;
      return Status::Ok();
    case kHold:
      r.hold = true;
      return Status::Ok();
    case kWait:
      r.wait = true;
      return Status::Ok();
    case kIgnoredFlag:
    case kIgnoredValue:
      r.ignored.push_back(option.written);
      return Status::Ok();
    case kRefusedFlag:
    case kRefusedValue:
      return Refused(option, "not supported by Sluice (docs/compat.md)");
    case kInteractive:
      r.interactive = BsubInteractive::kPlain;
      return Status::Ok();
    case kInteractivePty:
      r.interactive = BsubInteractive::kPty;
      return Status::Ok();
    case kRefusedInteractive:
      return Refused(option, "interactive jobs over ssh or X11 are not supported by Sluice "
                             "(-I, -Ip and -Is are; docs/compat.md)");
    default:
      return ApplyValue(option, now, r);
  }
}

std::vector<std::string_view> SplitCommaList(std::string_view text) {
  std::vector<std::string_view> items;
  while (true) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string_view::npos) return items;
    text.remove_prefix(comma + 1);
  }
}

// Whether an rusage section's text names `mem` (`mem=10`, `lic=1:mem = 10`).
bool ReservesMem(std::string_view section) {
  for (size_t at = section.find("mem"); at != std::string_view::npos;
       at = section.find("mem", at + 1)) {
    const bool starts = at == 0 || section[at - 1] == ':' || section[at - 1] == ',' ||
                        section[at - 1] == ' ';
    size_t after = at + 3;
    while (after < section.size() && section[after] == ' ') ++after;
    if (starts && after < section.size() && section[after] == '=') return true;
  }
  return false;
}

// `-J name` or `-J 'name[1-50]%5'` (an array: name and array spec).
Status SetName(const std::string& value, SubmitFlags& f) {
  const size_t open = value.find('[');
  if (open == std::string::npos) {
    f.name = value;
    return Status::Ok();
  }
  const size_t close = value.find(']', open);
  const std::string array =
      close == std::string::npos ? "" : value.substr(open + 1, close - open - 1) + value.substr(close + 1);
  if (open == 0 || array.empty() ||
      array.find_first_not_of("0123456789-,:%") != std::string::npos) {
    return InvalidArgument("-J " + value + ": expected NAME or NAME[INDEXES]%LIMIT");
  }
  f.name = value.substr(0, open);
  f.array = array;
  return Status::Ok();
}

}  // namespace

Result<BsubCommandLine> ParseBsubArgs(std::span<const std::string> args, int64_t now) {
  Result<ParsedArgs> parsed = ParseOptions(args, kOptions, OptionStyle::kLsf, true);
  if (!parsed) return parsed.error();
  BsubCommandLine out;
  for (const ParsedOption& option : parsed->options) {
    SLUICE_RETURN_IF_ERROR(Apply(option, now, out.request));
  }
  out.operands = std::move(parsed->operands);
  return out;
}

Status ApplyBsubDirective(std::span<const std::string> words, int64_t now, BsubRequest& request) {
  Result<ParsedArgs> parsed = ParseOptions(words, kOptions, OptionStyle::kLsf, false);
  if (!parsed) return parsed.error();
  if (!parsed->operands.empty()) {
    return InvalidArgument("expected an option, got the word '" + parsed->operands.front() + "'");
  }
  BsubRequest lines = request;
  for (const ParsedOption& option : parsed->options) {
    if (option.id == kWait || option.id == kInteractive || option.id == kInteractivePty) {
      return InvalidArgument(option.written + " is an option of the command line only");
    }
    SLUICE_RETURN_IF_ERROR(Apply(option, now, lines));
  }
  request = std::move(lines);
  return Status::Ok();
}

BsubRequest MergeBsub(const BsubRequest& command_line, const BsubRequest& directives) {
  BsubRequest out = command_line;
  const auto fill = [](auto& field, const auto& fallback) {
    if (!field) field = fallback;
  };
  fill(out.tasks, directives.tasks);
  fill(out.queue, directives.queue);
  fill(out.run_limit, directives.run_limit);
  fill(out.name, directives.name);
  fill(out.output, directives.output);
  fill(out.error, directives.error);
  fill(out.project, directives.project);
  fill(out.cwd, directives.cwd);
  fill(out.depend, directives.depend);
  fill(out.begin, directives.begin);
  fill(out.mem_limit_mb, directives.mem_limit_mb);
  fill(out.gpu, directives.gpu);
  fill(out.priority, directives.priority);
  fill(out.exclusive, directives.exclusive);
  fill(out.hold, directives.hold);
  fill(out.env_spec, directives.env_spec);
  fill(out.reservation, directives.reservation);
  if (out.resreq.empty()) out.resreq = directives.resreq;
  out.ignored.insert(out.ignored.begin(), directives.ignored.begin(), directives.ignored.end());
  return out;
}

std::string WithMemory(const std::string& resreq, int64_t mb) {
  if (resreq.find('{') != std::string::npos) return resreq;  // a compound: as written
  const std::string mem = "mem=" + std::to_string(mb);
  const size_t rusage = resreq.find("rusage[");
  if (rusage == std::string::npos) {
    return resreq + (resreq.empty() ? "" : " ") + "rusage[" + mem + "]";
  }
  const size_t open = rusage + 7;
  const std::string_view section =
      std::string_view(resreq).substr(open, resreq.find(']', open) - open);
  if (ReservesMem(section)) return resreq;
  const bool empty = section.find_first_not_of(' ') == std::string_view::npos;
  std::string out = resreq;
  out.insert(open, mem + (empty ? "" : ":"));
  return out;
}

Result<SubmitFlags> ToSubmitFlags(const BsubRequest& r) {
  SubmitFlags f;
  f.tasks = r.tasks.value_or("");
  f.queue = r.queue.value_or("");
  f.run_limit = r.run_limit.value_or("");
  if (r.name) SLUICE_RETURN_IF_ERROR(SetName(*r.name, f));
  f.output = r.output.value_or("");
  f.error = r.error.value_or("");
  f.project = r.project.value_or("");
  f.cwd = r.cwd.value_or("");
  f.depend = r.depend.value_or("");
  f.begin = r.begin.value_or("");
  f.reservation = r.reservation.value_or("");
  f.exclusive = r.exclusive.value_or(false);
  f.hold = r.hold.value_or(false);
  f.priority = r.priority;
  for (const std::string& request : r.resreq) {
    f.resreq += (f.resreq.empty() ? "" : " ") + request;
  }
  if (r.mem_limit_mb) f.resreq = WithMemory(f.resreq, *r.mem_limit_mb);
  if (r.gpu) {
    Result<std::string> with_gpu = WithGpuSection(f.resreq, *r.gpu);
    if (!with_gpu) {
      return Status(with_gpu.error().code(), "-gpu: " + with_gpu.error().message());
    }
    f.resreq = *with_gpu;
  }
  return f;
}

Result<Environment> ResolveLsfEnv(const std::optional<std::string>& spec,
                                  const Environment& caller) {
  if (!spec) return caller;
  Environment env;
  for (std::string_view item : SplitCommaList(*spec)) {
    if (item == "all") {
      env.insert(caller.begin(), caller.end());  // listed values win, in any order
      continue;
    }
    if (item == "none") continue;
    const size_t eq = item.find('=');
    const std::string name(item.substr(0, eq));
    if (name.empty() || name.find(' ') != std::string::npos) {
      return InvalidArgument("-env " + *spec + ": '" + std::string(item) +
                             "' is not all, none, NAME or NAME=VALUE");
    }
    if (eq != std::string_view::npos) {
      env.insert_or_assign(name, std::string(item.substr(eq + 1)));
    } else if (auto it = caller.find(name); it != caller.end()) {
      env.insert_or_assign(name, it->second);
    }
  }
  return env;
}

}  // namespace sluice::client::compat
