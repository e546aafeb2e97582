#include "client/directives.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace sluice::client {
namespace {

enum class Dialect { kSluice, kBsub, kSbatch };

// What an option sets. kLsfName also splits an array spec off (`name[1-50]%5`).
enum class Field {
  kTasks,
  kSlurmTasks,
  kQueue,
  kRunLimit,
  kSlurmTime,
  kName,
  kLsfName,
  kOutput,
  kError,
  kResreq,
  kExclusive,
  kHold,
  kDepend,
  kSlurmDepend,
  kBegin,
  kSlurmBegin,
  kProject,
  kPriority,
  kCwd,
  kArray,
  kSlurmNodes,
  kIgnored
};

struct OptionSpec {
  std::string_view short_name;  // "-n"; empty: none
  std::string_view long_name;   // "--ntasks"; empty: none
  bool takes_value;
  Field field;
};

constexpr OptionSpec kSluiceOptions[] = {
    {"-q", "--queue", true, Field::kQueue},
    {"-n", "--tasks", true, Field::kTasks},
    {"-R", "--resreq", true, Field::kResreq},
    {"-W", "--run-limit", true, Field::kRunLimit},
    {"-w", "--depend", true, Field::kDepend},
    {"-b", "--begin", true, Field::kBegin},
    {"-x", "--exclusive", false, Field::kExclusive},
    {"-H", "--hold", false, Field::kHold},
    {"-o", "--output", true, Field::kOutput},
    {"-e", "--error", true, Field::kError},
    {"-J", "--name", true, Field::kName},
    {"-P", "--project", true, Field::kProject},
    {"", "--priority", true, Field::kPriority},
    {"", "--cwd", true, Field::kCwd},
    {"-a", "--array", true, Field::kArray},
};

constexpr OptionSpec kBsubOptions[] = {
    {"-n", "", true, Field::kTasks},    {"-q", "", true, Field::kQueue},
    {"-W", "", true, Field::kRunLimit}, {"-J", "", true, Field::kLsfName},
    {"-o", "", true, Field::kOutput},   {"-oo", "", true, Field::kOutput},
    {"-e", "", true, Field::kError},    {"-eo", "", true, Field::kError},
    {"-R", "", true, Field::kResreq},   {"-x", "", false, Field::kExclusive},
    {"-w", "", true, Field::kDepend},   {"-b", "", true, Field::kBegin},
    {"-P", "", true, Field::kProject},  {"-H", "", false, Field::kHold},
    {"-cwd", "", true, Field::kCwd},    {"-u", "", true, Field::kIgnored},
    {"-N", "", false, Field::kIgnored}, {"-B", "", false, Field::kIgnored},
};

constexpr OptionSpec kSbatchOptions[] = {
    {"-n", "--ntasks", true, Field::kSlurmTasks},
    {"-p", "--partition", true, Field::kQueue},
    {"-t", "--time", true, Field::kSlurmTime},
    {"-J", "--job-name", true, Field::kName},
    {"-o", "--output", true, Field::kOutput},
    {"-e", "--error", true, Field::kError},
    {"", "--exclusive", false, Field::kExclusive},
    {"-d", "--dependency", true, Field::kSlurmDepend},
    {"", "--begin", true, Field::kSlurmBegin},
    {"-a", "--array", true, Field::kArray},
    {"-A", "--account", true, Field::kProject},
    {"-H", "--hold", false, Field::kHold},
    {"-D", "--chdir", true, Field::kCwd},
    {"-N", "--nodes", true, Field::kSlurmNodes},
    {"", "--mail-type", true, Field::kIgnored},
    {"", "--mail-user", true, Field::kIgnored},
    {"", "--export", true, Field::kIgnored},
    {"", "--requeue", false, Field::kIgnored},
    {"", "--no-requeue", false, Field::kIgnored},
    {"", "--comment", true, Field::kIgnored},
    {"-q", "--qos", true, Field::kIgnored},
};

std::string_view PrefixOf(Dialect dialect) {
  switch (dialect) {
    case Dialect::kSluice:
      return "#SLUICE";
    case Dialect::kBsub:
      return "#BSUB";
    case Dialect::kSbatch:
      return "#SBATCH";
  }
  return "";
}

template <size_t N>
std::vector<OptionSpec> AsVector(const OptionSpec (&options)[N]) {
  return std::vector<OptionSpec>(options, options + N);
}

const std::vector<OptionSpec>& OptionsOf(Dialect dialect) {
  static const std::vector<OptionSpec> kSluice = AsVector(kSluiceOptions);
  static const std::vector<OptionSpec> kBsub = AsVector(kBsubOptions);
  static const std::vector<OptionSpec> kSbatch = AsVector(kSbatchOptions);
  switch (dialect) {
    case Dialect::kSluice:
      return kSluice;
    case Dialect::kBsub:
      return kBsub;
    case Dialect::kSbatch:
      return kSbatch;
  }
  return kSluice;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Splits a directive's rest into words as a shell would; a word starting with `#` ends it.
Result<std::vector<std::string>> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i == text.size() || text[i] == '#') break;
    std::string word;
    char quote = 0;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else if (c == '\\' && quote == '"' && i + 1 < text.size()) {
          word += text[++i];
        } else {
          word += c;
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '\\' && i + 1 < text.size()) {
        word += text[++i];
      } else if (c == ' ' || c == '\t' || c == '\r') {
        break;
      } else {
        word += c;
      }
    }
    if (quote != 0) return InvalidArgument(std::string("unterminated ") + quote + " quote");
    words.push_back(std::move(word));
  }
  return words;
}

// "N" or "MIN,MAX" with 1 <= MIN <= MAX (slurm: "N" only).
Status CheckTasks(std::string_view value, bool range_allowed) {
  const size_t comma = value.find(',');
  const auto min = ParseInt(value.substr(0, comma));
  const auto max = comma == std::string_view::npos ? min : ParseInt(value.substr(comma + 1));
  if (!min || !max || *min < 1 || *max < *min || (!range_allowed && *min != *max)) {
    return InvalidArgument(range_allowed ? "expected N or MIN,MAX with 1 <= MIN <= MAX"
                                         : "expected a positive number of tasks");
  }
  return Status::Ok();
}

Status CheckArray(std::string_view value) {
  const bool ok = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == ',' || c == ':' || c == '%';
  });
  return ok ? Status::Ok() : InvalidArgument("expected an index list like 1-100%10 or 1,5,7-9");
}

// `name[1-50]%5` -> name and array `1-50%5`.
Status SetLsfName(std::string_view value, SubmitFlags& flags) {
  const size_t open = value.find('[');
  if (open == std::string_view::npos) {
    flags.name = std::string(value);
    return Status::Ok();
  }
  const size_t close = value.find(']', open);
  if (close == std::string_view::npos || open == 0) {
    return InvalidArgument("expected NAME or NAME[INDEXES]%LIMIT");
  }
  std::string array(value.substr(open + 1, close - open - 1));
  array += value.substr(close + 1);
  SLUICE_RETURN_IF_ERROR(CheckArray(array));
  flags.name = std::string(value.substr(0, open));
  flags.array = std::move(array);
  return Status::Ok();
}

// "now+60", "now+2hours" -> "+60", "+7200"; other forms as ParseBeginTime reads them.
Result<std::string> SlurmBegin(std::string_view value, int64_t now) {
  std::string text(value);
  if (value.starts_with("now+")) {
    std::string_view rest = value.substr(4);
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    const auto amount = ParseInt(rest.substr(0, digits));
    const std::string_view unit = rest.substr(digits);
    int64_t scale = 0;
    if (unit.empty() || unit == "seconds" || unit == "s") scale = 1;
    if (unit == "minutes" || unit == "m") scale = 60;
    if (unit == "hours" || unit == "h") scale = 3600;
    if (unit == "days" || unit == "d") scale = 86400;
    if (unit == "weeks") scale = 7 * 86400;
    if (!amount || scale == 0) return InvalidArgument("expected now+N[seconds|minutes|hours|days]");
    text = "+" + std::to_string(*amount * scale);
  }
  Result<int64_t> begin = ParseBeginTime(text, now);
  if (!begin) return InvalidArgument("expected now+N, HH:MM or YYYY-MM-DD[THH:MM[:SS]]");
  return text;
}

// The flag a plain-text field sets (any non-empty value), or null for the other fields.
std::string* TextField(Field field, SubmitFlags& flags) {
  switch (field) {
    case Field::kQueue:
      return &flags.queue;
    case Field::kName:
      return &flags.name;
    case Field::kOutput:
      return &flags.output;
    case Field::kError:
      return &flags.error;
    case Field::kResreq:
      return &flags.resreq;
    case Field::kDepend:
      return &flags.depend;
    case Field::kProject:
      return &flags.project;
    case Field::kCwd:
      return &flags.cwd;
    default:
      return nullptr;
  }
}

// Sets the flag `field` from `value`, checking what the flag's value must look like.
Status SetField(Field field, std::string_view value, int64_t now, SubmitFlags& flags) {
  const std::string text(value);
  switch (field) {
    case Field::kTasks:
    case Field::kSlurmTasks:
      SLUICE_RETURN_IF_ERROR(CheckTasks(value, field == Field::kTasks));
      flags.tasks = text;
      return Status::Ok();
    case Field::kRunLimit: {
      Result<int64_t> limit = ParseRunLimit(text);
      if (!limit) return InvalidArgument("expected MINUTES, HOURS:MINUTES or H:M:S");
      flags.run_limit = text;
      return Status::Ok();
    }
    case Field::kSlurmTime: {
      Result<int64_t> seconds = ParseSlurmTime(value);
      if (!seconds) return seconds.error();
      flags.run_limit = std::to_string(*seconds) + "s";
      return Status::Ok();
    }
    case Field::kBegin:
      if (!ParseBeginTime(text, now)) {
        return InvalidArgument("expected epoch seconds, +DURATION, HH:MM or YYYY-MM-DD[THH:MM]");
      }
      flags.begin = text;
      return Status::Ok();
    case Field::kSlurmBegin: {
      Result<std::string> begin = SlurmBegin(value, now);
      if (!begin) return begin.error();
      flags.begin = *begin;
      return Status::Ok();
    }
    case Field::kSlurmDepend: {
      Result<std::string> depend = TranslateSlurmDependency(value);
      if (!depend) return depend.error();
      flags.depend = *depend;
      return Status::Ok();
    }
    case Field::kPriority: {
      const auto priority = ParseInt(value);
      if (!priority) return InvalidArgument("expected an integer");
      flags.priority = *priority;
      return Status::Ok();
    }
    case Field::kArray:
      SLUICE_RETURN_IF_ERROR(CheckArray(value));
      flags.array = text;
      return Status::Ok();
    case Field::kLsfName:
      return SetLsfName(value, flags);
    case Field::kSlurmNodes:
      if (value != "1" && value != "1-1") {
        return InvalidArgument("only --nodes=1 (all tasks on one host) is supported");
      }
      flags.resreq = "span[hosts=1]";
      return Status::Ok();
    default:
      break;
  }
  if (text.empty()) return InvalidArgument("expected a non-empty value");
  if (std::string* target = TextField(field, flags)) *target = text;
  return Status::Ok();
}

// The option a word names: exact short or long name; for a short option with a value also
// `-n4` (the value attached, as getopt allows). `attached` gets such a value or `=VALUE`.
const OptionSpec* FindOption(Dialect dialect, std::string_view word,
                             std::optional<std::string>& attached) {
  attached.reset();
  std::string_view name = word;
  if (word.starts_with("--")) {
    if (const size_t eq = word.find('='); eq != std::string_view::npos) {
      name = word.substr(0, eq);
      attached = std::string(word.substr(eq + 1));
    }
    for (const OptionSpec& o : OptionsOf(dialect)) {
      if (!o.long_name.empty() && o.long_name == name) return &o;
    }
    return nullptr;
  }
  for (const OptionSpec& o : OptionsOf(dialect)) {
    if (!o.short_name.empty() && o.short_name == word) return &o;
  }
  if (dialect == Dialect::kBsub || word.size() <= 2) return nullptr;
  for (const OptionSpec& o : OptionsOf(dialect)) {
    if (o.takes_value && o.short_name.size() == 2 && word.starts_with(o.short_name)) {
      attached = std::string(word.substr(2));
      return &o;
    }
  }
  return nullptr;
}

// One directive line's words; messages start with `where` and name the option
// (`job.sh:4: #SBATCH --time=abc: ...`).
Status ApplyWords(Dialect dialect, const std::vector<std::string>& words, int64_t now,
                  const std::string& where, Directives& out) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const std::string what = where + " " + word;
    std::optional<std::string> attached;
    const OptionSpec* option =
        word.starts_with("-") ? FindOption(dialect, word, attached) : nullptr;
    if (option == nullptr) {
      return InvalidArgument(
          what + ": " +
          (word.starts_with("-") ? "unknown option" : "expected an option, got a bare word"));
    }
    std::string value;
    if (option->takes_value) {
      if (attached) {
        value = *attached;
      } else if (i + 1 < words.size()) {
        value = words[++i];
      } else {
        return InvalidArgument(what + ": expects a value");
      }
    } else if (attached) {
      return InvalidArgument(what + ": takes no value");
    }
    if (option->field == Field::kIgnored) {
      out.warnings.push_back(what + " ignored (means nothing to Sluice)");
      continue;
    }
    if (option->field == Field::kExclusive) {
      out.flags.exclusive = true;
      continue;
    }
    if (option->field == Field::kHold) {
      out.flags.hold = true;
      continue;
    }
    Status set = SetField(option->field, value, now, out.flags);
    if (!set.ok()) {
      const std::string shown = attached ? word : word + " " + value;
      return InvalidArgument(where + " " + shown + ": " + set.message());
    }
  }
  return Status::Ok();
}

// The dialect of a directive line, or nullopt for a plain comment.
std::optional<Dialect> DialectOf(std::string_view line, std::string_view& rest) {
  for (Dialect d : {Dialect::kSluice, Dialect::kBsub, Dialect::kSbatch}) {
    const std::string_view prefix = PrefixOf(d);
    if (!line.starts_with(prefix)) continue;
    rest = line.substr(prefix.size());
    if (rest.empty() || rest.front() == ' ' || rest.front() == '\t' || rest.front() == '\r') {
      return d;
    }
  }
  return std::nullopt;
}

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace

Result<int64_t> ParseSlurmTime(std::string_view text) {
  const auto bad = [&] { return InvalidArgument("expected M, M:S, H:M:S, D-H, D-H:M or D-H:M:S"); };
  if (text == "infinite" || text == "unlimited" || text.empty() || text.size() > 32) return bad();
  int64_t days = 0;
  std::string_view clock = text;
  const size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    const auto d = ParseInt(text.substr(0, dash));
    if (!d || *d < 0) return bad();
    days = *d;
    clock = text.substr(dash + 1);
  }
  std::vector<int64_t> parts;
  while (true) {
    const size_t colon = clock.find(':');
    const auto value = ParseInt(clock.substr(0, colon));
    if (!value || *value < 0 || *value > 1'000'000'000) return bad();
    parts.push_back(*value);
    if (colon == std::string_view::npos) break;
    clock.remove_prefix(colon + 1);
  }
  if (parts.size() > 3) return bad();
  int64_t seconds = 0;
  if (dash != std::string_view::npos) {  // D-H, D-H:M, D-H:M:S
    const int64_t scale[3] = {3600, 60, 1};
    for (size_t i = 0; i < parts.size(); ++i) seconds += parts[i] * scale[i];
  } else if (parts.size() == 1) {  // M
    seconds = parts[0] * 60;
  } else if (parts.size() == 2) {  // M:S
    seconds = parts[0] * 60 + parts[1];
  } else {  // H:M:S
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  }
  seconds += days * 86400;
  if (seconds <= 0) return InvalidArgument("the time limit must be positive");
  return seconds;
}

Result<std::string> TranslateSlurmDependency(std::string_view text) {
  const auto bad = [&](const std::string& why) { return InvalidArgument(why); };
  const bool any = text.find('?') != std::string_view::npos;
  if (any && text.find(',') != std::string_view::npos) {
    return bad("',' (all of) and '?' (any of) cannot be mixed");
  }
  const char sep = any ? '?' : ',';
  std::string out;
  while (!text.empty()) {
    const size_t end = text.find(sep);
    std::string_view term = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const size_t colon = term.find(':');
    const std::string_view type = term.substr(0, colon);
    std::string_view atom;
    if (type == "after") atom = "started";
    if (type == "afterany") atom = "ended";
    if (type == "afterok") atom = "done";
    if (type == "afternotok") atom = "exit";
    if (atom.empty() || colon == std::string_view::npos) {
      return bad("expected after, afterany, afterok or afternotok followed by :JOBID[:JOBID...]");
    }
    std::string_view ids = term.substr(colon + 1);
    while (true) {
      const size_t next = ids.find(':');
      std::string_view id = ids.substr(0, next);
      const size_t underscore = id.find('_');  // an array element: 12_3 -> 12[3]
      const auto job = ParseInt(id.substr(0, underscore));
      const auto index = underscore == std::string_view::npos ? std::optional<int64_t>(0)
                                                              : ParseInt(id.substr(underscore + 1));
      if (!job || *job < 1 || !index || *index < 0) return bad("expected job ids after the type");
      if (!out.empty()) out += any ? " || " : " && ";
      out += std::string(atom) + "(" + std::string(id.substr(0, underscore));
      if (underscore != std::string_view::npos) out += "[" + std::to_string(*index) + "]";
      out += ")";
      if (next == std::string_view::npos) break;
      ids.remove_prefix(next + 1);
    }
  }
  if (out.empty()) return bad("expected a dependency, e.g. afterok:12");
  return out;
}

Result<Directives> ParseDirectives(std::string_view script, std::string_view where, int64_t now) {
  Directives out;
  size_t line_number = 0;
  while (!script.empty()) {
    const size_t end = script.find('\n');
    const std::string_view line = script.substr(0, end);
    script = end == std::string_view::npos ? std::string_view() : script.substr(end + 1);
    ++line_number;
    if (line_number == 1 && line.starts_with("#!")) continue;
    if (IsBlank(line)) continue;
    if (!line.starts_with("#")) break;  // the first command: directives end here
    std::string_view rest;
    const std::optional<Dialect> dialect = DialectOf(line, rest);
    if (!dialect) continue;  // a plain comment
    const std::string line_where = std::string(where) + ":" + std::to_string(line_number) + ": ";
    Result<std::vector<std::string>> words = SplitWords(rest);
    if (!words) {
      return InvalidArgument(line_where + std::string(PrefixOf(*dialect)) + ": " +
                             words.error().message());
    }
    SLUICE_RETURN_IF_ERROR(
        ApplyWords(*dialect, *words, now, line_where + std::string(PrefixOf(*dialect)), out));
  }
  return out;
}

Result<SubmitFlags> ParseSubmitFlags(std::string_view text, std::string_view where, int64_t now) {
  Result<std::vector<std::string>> words = SplitWords(text);
  if (!words) return InvalidArgument(std::string(where) + " " + words.error().message());
  Directives out;
  SLUICE_RETURN_IF_ERROR(ApplyWords(Dialect::kSluice, *words, now, std::string(where), out));
  return out.flags;
}

SubmitFlags MergeFlags(const SubmitFlags& command_line, const SubmitFlags& directives) {
  SubmitFlags out = command_line;
  const auto fill = [](std::string& field, const std::string& fallback) {
    if (field.empty()) field = fallback;
  };
  fill(out.queue, directives.queue);
  fill(out.tasks, directives.tasks);
  fill(out.resreq, directives.resreq);
  fill(out.run_limit, directives.run_limit);
  fill(out.depend, directives.depend);
  fill(out.begin, directives.begin);
  fill(out.output, directives.output);
  fill(out.error, directives.error);
  fill(out.cwd, directives.cwd);
  fill(out.name, directives.name);
  fill(out.project, directives.project);
  fill(out.array, directives.array);
  out.exclusive = command_line.exclusive || directives.exclusive;
  out.hold = command_line.hold || directives.hold;
  if (!out.priority) out.priority = directives.priority;
  return out;
}

}  // namespace sluice::client
