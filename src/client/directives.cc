#include "client/directives.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "client/compat/gpu_request.h"

namespace sluice::client {
namespace {

// What a #SLUICE option sets.
enum class Field {
  kTasks,
  kQueue,
  kRunLimit,
  kName,
  kOutput,
  kError,
  kResreq,
  kGpu,
  kExclusive,
  kHold,
  kDepend,
  kBegin,
  kProject,
  kPriority,
  kCwd,
  kArray,
  kReservation,
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
    {"", "--gpu", true, Field::kGpu},
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
    {"-U", "--reservation", true, Field::kReservation},
};

using Dialect = DirectiveDialect;

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

// "N" or "MIN,MAX" with 1 <= MIN <= MAX.
Status CheckTasks(std::string_view value) {
  const size_t comma = value.find(',');
  const auto min = ParseInt(value.substr(0, comma));
  const auto max = comma == std::string_view::npos ? min : ParseInt(value.substr(comma + 1));
  if (!min || !max || *min < 1 || *max < *min) {
    return InvalidArgument("expected N or MIN,MAX with 1 <= MIN <= MAX");
  }
  return Status::Ok();
}

Status CheckArray(std::string_view value) {
  const bool ok = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == ',' || c == ':' || c == '%';
  });
  return ok ? Status::Ok() : InvalidArgument("expected an index list like 1-100%10 or 1,5,7-9");
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
    case Field::kReservation:
      return &flags.reservation;
    default:
      return nullptr;
  }
}

// Sets the flag `field` from `value`, checking what the flag's value must look like.
Status SetField(Field field, std::string_view value, int64_t now, SubmitFlags& flags) {
  const std::string text(value);
  switch (field) {
    case Field::kTasks:
      SLUICE_RETURN_IF_ERROR(CheckTasks(value));
      flags.tasks = text;
      return Status::Ok();
    case Field::kRunLimit: {
      Result<int64_t> limit = ParseRunLimit(text);
      if (!limit) return InvalidArgument("expected MINUTES, HOURS:MINUTES or H:M:S");
      flags.run_limit = text;
      return Status::Ok();
    }
    case Field::kBegin:
      if (!ParseBeginTime(text, now)) {
        return InvalidArgument("expected epoch seconds, +DURATION, HH:MM or YYYY-MM-DD[THH:MM]");
      }
      flags.begin = text;
      return Status::Ok();
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
    case Field::kGpu: {
      Result<std::string> section = compat::LsfGpuSection(value);  // checked now: names its line
      if (!section) return section.error();
      flags.gpu = text;
      return Status::Ok();
    }
    default:
      break;
  }
  if (text.empty()) return InvalidArgument("expected a non-empty value");
  if (std::string* target = TextField(field, flags)) *target = text;
  return Status::Ok();
}

// The #SLUICE option a word names: exact short or long name; for a short option with a value
// also `-n4` (the value attached, as getopt allows). `attached` gets such a value or `=VALUE`.
const OptionSpec* FindOption(std::string_view word, std::optional<std::string>& attached) {
  attached.reset();
  std::string_view name = word;
  if (word.starts_with("--")) {
    if (const size_t eq = word.find('='); eq != std::string_view::npos) {
      name = word.substr(0, eq);
      attached = std::string(word.substr(eq + 1));
    }
    for (const OptionSpec& o : kSluiceOptions) {
      if (!o.long_name.empty() && o.long_name == name) return &o;
    }
    return nullptr;
  }
  for (const OptionSpec& o : kSluiceOptions) {
    if (!o.short_name.empty() && o.short_name == word) return &o;
  }
  if (word.size() <= 2) return nullptr;
  for (const OptionSpec& o : kSluiceOptions) {
    if (o.takes_value && o.short_name.size() == 2 && word.starts_with(o.short_name)) {
      attached = std::string(word.substr(2));
      return &o;
    }
  }
  return nullptr;
}

// `sluice submit`'s flags in `words`; messages start with `label` and name the option
// (`job.sh:4: #SLUICE -W abc: ...`, `drmaa_native_specification: -n x: ...`).
Status ApplySluiceFlags(const std::vector<std::string>& words, const std::string& label,
                        int64_t now, SubmitFlags& flags) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const std::string what = label + " " + word;
    std::optional<std::string> attached;
    const OptionSpec* option = word.starts_with("-") ? FindOption(word, attached) : nullptr;
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
    if (option->field == Field::kExclusive) {
      flags.exclusive = true;
      continue;
    }
    if (option->field == Field::kHold) {
      flags.hold = true;
      continue;
    }
    Status set = SetField(option->field, value, now, flags);
    if (!set.ok()) {
      const std::string shown = attached ? word : word + " " + value;
      return InvalidArgument(label + " " + shown + ": " + set.message());
    }
  }
  return Status::Ok();
}

// One #SLUICE line's words.
Status ApplySluiceWords(const DirectiveLine& line, int64_t now, SubmitFlags& flags) {
  return ApplySluiceFlags(line.words, line.where + "#SLUICE", now, flags);
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

Result<std::vector<DirectiveLine>> ReadDirectiveLines(std::string_view script,
                                                      std::string_view where) {
  std::vector<DirectiveLine> lines;
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
    DirectiveLine out{.dialect = *dialect,
                      .where = std::string(where) + ":" + std::to_string(line_number) + ": ",
                      .text = std::string(line.substr(0, line.find_last_not_of(" \t\r") + 1))};
    Result<std::vector<std::string>> words = SplitWords(rest);
    if (!words) {
      return InvalidArgument(out.where + std::string(PrefixOf(*dialect)) + ": " +
                             words.error().message());
    }
    out.words = std::move(*words);
    lines.push_back(std::move(out));
  }
  return lines;
}

namespace {

// Reads the lines of `dialect` with `apply` (one line's words into the request); an error
// names the line, an ignored option becomes a warning naming it.
template <typename Request, typename ApplyLine>
Status ReadLines(const std::vector<DirectiveLine>& lines, Dialect dialect, ApplyLine apply,
                 Request& request, std::vector<std::string>& warnings) {
  for (const DirectiveLine& line : lines) {
    if (line.dialect != dialect) continue;
    const size_t ignored = request.ignored.size();
    Status applied = apply(line.words, request);
    if (!applied.ok()) {
      return Status(applied.code(), line.where + line.text + ": " + applied.message());
    }
    for (size_t i = ignored; i < request.ignored.size(); ++i) {
      warnings.push_back(line.where + std::string(PrefixOf(dialect)) + " " + request.ignored[i] +
                         " ignored (means nothing to Sluice)");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ReadSbatchLines(const std::vector<DirectiveLine>& lines, int64_t now,
                       compat::SbatchRequest& request, std::vector<std::string>& warnings) {
  const auto apply = [now](std::span<const std::string> words, compat::SbatchRequest& r) {
    return compat::ApplySbatchDirective(words, now, r);
  };
  return ReadLines(lines, Dialect::kSbatch, apply, request, warnings);
}

Status ReadBsubLines(const std::vector<DirectiveLine>& lines, int64_t now,
                     compat::BsubRequest& request, std::vector<std::string>& warnings) {
  const auto apply = [now](std::span<const std::string> words, compat::BsubRequest& r) {
    return compat::ApplyBsubDirective(words, now, r);
  };
  return ReadLines(lines, Dialect::kBsub, apply, request, warnings);
}

Result<Directives> ParseDirectives(std::string_view script, std::string_view where, int64_t now) {
  Result<std::vector<DirectiveLine>> lines = ReadDirectiveLines(script, where);
  if (!lines) return lines.error();
  Directives out;
  compat::SbatchRequest sbatch;
  compat::BsubRequest bsub;
  SLUICE_RETURN_IF_ERROR(ReadSbatchLines(*lines, now, sbatch, out.warnings));
  SLUICE_RETURN_IF_ERROR(ReadBsubLines(*lines, now, bsub, out.warnings));
  for (const DirectiveLine& line : *lines) {
    if (line.dialect == Dialect::kSluice) SLUICE_RETURN_IF_ERROR(ApplySluiceWords(line, now, out.flags));
  }
  // #SLUICE over #BSUB over #SBATCH.
  Result<SubmitFlags> slurm = compat::ToSubmitFlags(sbatch, "");
  if (!slurm) return slurm.error().WithPrefix(std::string(where) + ": #SBATCH");
  Result<SubmitFlags> lsf = compat::ToSubmitFlags(bsub);
  if (!lsf) return lsf.error().WithPrefix(std::string(where) + ": #BSUB");
  out.flags = MergeFlags(out.flags, MergeFlags(*lsf, *slurm));
  out.slurm_export = sbatch.export_spec;
  out.lsf_env = bsub.env_spec;
  return out;
}

Result<SubmitFlags> ParseSubmitFlags(std::string_view text, std::string_view where, int64_t now) {
  Result<std::vector<std::string>> words = SplitWords(text);
  if (!words) return InvalidArgument(std::string(where) + " " + words.error().message());
  SubmitFlags flags;
  SLUICE_RETURN_IF_ERROR(ApplySluiceFlags(*words, std::string(where), now, flags));
  return flags;
}

SubmitFlags MergeFlags(const SubmitFlags& command_line, const SubmitFlags& directives) {
  SubmitFlags out = command_line;
  const auto fill = [](std::string& field, const std::string& fallback) {
    if (field.empty()) field = fallback;
  };
  fill(out.queue, directives.queue);
  fill(out.tasks, directives.tasks);
  fill(out.resreq, directives.resreq);
  fill(out.gpu, directives.gpu);
  fill(out.run_limit, directives.run_limit);
  fill(out.depend, directives.depend);
  fill(out.begin, directives.begin);
  fill(out.output, directives.output);
  fill(out.error, directives.error);
  fill(out.cwd, directives.cwd);
  fill(out.name, directives.name);
  fill(out.project, directives.project);
  fill(out.array, directives.array);
  fill(out.reservation, directives.reservation);
  out.exclusive = command_line.exclusive || directives.exclusive;
  out.hold = command_line.hold || directives.hold;
  if (!out.priority) out.priority = directives.priority;
  return out;
}

}  // namespace sluice::client
