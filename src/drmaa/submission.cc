#include "drmaa/submission.h"

#include "client/submit_request.h"
#include "drmaa/drmaa.h"
#include "drmaa/native_spec.h"
#include "drmaa/placeholders.h"
#include "drmaa/time_values.h"

namespace sluice::drmaa {
namespace {

using client::SubmitFlags;
using nlohmann::json;

std::string Absolute(const std::string& path, const std::string& dir) {
  if (path.empty() || path.front() == '/' || dir.empty()) return path;
  return dir + (dir.back() == '/' ? "" : "/") + path;
}

Error Conflict(std::string_view attribute, std::string_view value, std::string_view flag_name,
               std::string_view flag) {
  return Error(DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
               std::string(attribute) + " (\"" + std::string(value) +
                   "\") and the native specification's " + std::string(flag_name) + " (\"" +
                   std::string(flag) + "\") both set it: keep one");
}

// Sets the native specification's `flag` from an attribute's `value`; both set is a conflict.
Error Fill(std::string& flag, const std::string& value, std::string_view attribute,
           std::string_view flag_name) {
  if (value.empty()) return Error::None();
  if (!flag.empty()) return Conflict(attribute, value, flag_name, flag);
  flag = value;
  return Error::None();
}

// Step 2: the attributes that are a flag's value as they stand (or once read).
Error MergeAttributes(const TemplateValues& values, int64_t now, SubmitFlags& flags) {
  // A job category names the queue: the site's policies for a kind of job (docs/drmaa.md).
  SLUICE_DRMAA_RETURN_IF_ERROR(
      Fill(flags.queue, std::string(values.Scalar(DRMAA_JOB_CATEGORY)), DRMAA_JOB_CATEGORY, "-q"));
  if (std::string_view start = values.Scalar(DRMAA_START_TIME); !start.empty()) {
    Expected<int64_t> begin = ParseStartTime(start, now);
    if (!begin) return begin.error();
    SLUICE_DRMAA_RETURN_IF_ERROR(
        Fill(flags.begin, std::to_string(*begin), DRMAA_START_TIME, "-b"));
  }
  if (std::string_view limit = values.Scalar(DRMAA_WCT_HLIMIT); !limit.empty()) {
    Expected<int64_t> seconds = ParseTimeAmount(limit, DRMAA_WCT_HLIMIT);
    if (!seconds) return seconds.error();
    SLUICE_DRMAA_RETURN_IF_ERROR(
        Fill(flags.run_limit, std::to_string(*seconds) + "s", DRMAA_WCT_HLIMIT, "-W"));
  }
  const std::string_view state = values.Scalar(DRMAA_JS_STATE);
  if (state == DRMAA_SUBMISSION_STATE_ACTIVE && flags.hold) {
    return Error(DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
                 std::string(DRMAA_JS_STATE) + " is " DRMAA_SUBMISSION_STATE_ACTIVE
                                               " but the native specification holds the job "
                                               "(-H): keep one");
  }
  if (state == DRMAA_SUBMISSION_STATE_HOLD) flags.hold = true;
  // The name is set on the body as given (step 5), not through -J: brackets in it are not an
  // array there.
  const std::string_view name = values.Scalar(DRMAA_JOB_NAME);
  if (!name.empty() && !flags.name.empty()) return Conflict(DRMAA_JOB_NAME, name, "-J", flags.name);
  return Error::None();
}

// Step 3, one stream: an output or error path attribute (`letter` 'o' or 'e').
Expected<std::string> ResolveStream(std::string_view value, std::string_view attribute,
                                    char letter, const PlaceholderValues& placeholders,
                                    const SubmitContext& ctx, const std::string& job_name) {
  Expected<std::string> path = PathOf(value, attribute);
  if (!path) return path.error();
  Expected<std::string> expanded = ExpandPlaceholders(*path, attribute, placeholders);
  if (!expanded) return expanded.error();
  std::string out = Absolute(*expanded, *placeholders.wd);
  if (ctx.is_directory && ctx.is_directory(out)) {
    std::string file = job_name.empty() ? "drmaa" : job_name;
    for (char& c : file) c = c == '/' ? '_' : c;
    out += (out.back() == '/' ? "" : "/") + file + "." + letter + "%j";
    if (placeholders.index) out += "." + *placeholders.index;
  }
  return out;
}

// Step 3: the working directory, then the paths that may name it.
Error ResolvePaths(const TemplateValues& values, const SubmitContext& ctx, bool bulk,
                   SubmitFlags& flags) {
  PlaceholderValues placeholders{.home = ctx.home};
  if (std::string_view wd = values.Scalar(DRMAA_WD); !wd.empty()) {
    Expected<std::string> expanded = ExpandPlaceholders(wd, DRMAA_WD, placeholders);
    if (!expanded) return expanded.error();
    SLUICE_DRMAA_RETURN_IF_ERROR(Fill(flags.cwd, *expanded, DRMAA_WD, "--cwd"));
  }
  flags.cwd = flags.cwd.empty() ? ctx.submit_dir : Absolute(flags.cwd, ctx.submit_dir);
  placeholders.wd = flags.cwd;
  if (bulk) placeholders.index = "%a";  // the controller's index pattern (docs/api.md)
  const std::string name(values.Scalar(DRMAA_JOB_NAME).empty() ? flags.name
                                                                 : values.Scalar(DRMAA_JOB_NAME));
  if (std::string_view output = values.Scalar(DRMAA_OUTPUT_PATH); !output.empty()) {
    Expected<std::string> path =
        ResolveStream(output, DRMAA_OUTPUT_PATH, 'o', placeholders, ctx, name);
    if (!path) return path.error();
    SLUICE_DRMAA_RETURN_IF_ERROR(Fill(flags.output, *path, DRMAA_OUTPUT_PATH, "-o"));
  }
  // join_files: stderr goes to the output file, and drmaa_error_path is ignored (GFD.133).
  if (values.Scalar(DRMAA_JOIN_FILES) == "y") {
    if (!flags.error.empty()) {
      return Error(DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
                   std::string(DRMAA_JOIN_FILES) + " is y but the native specification names "
                                                   "an error file (-e): keep one");
    }
    return Error::None();
  }
  if (std::string_view error = values.Scalar(DRMAA_ERROR_PATH); !error.empty()) {
    Expected<std::string> path =
        ResolveStream(error, DRMAA_ERROR_PATH, 'e', placeholders, ctx, name);
    if (!path) return path.error();
    SLUICE_DRMAA_RETURN_IF_ERROR(Fill(flags.error, *path, DRMAA_ERROR_PATH, "-e"));
  }
  return Error::None();
}

std::string ArrayText(const BulkRange& range) {
  std::string text = std::to_string(range.start) + "-" + std::to_string(range.end);
  if (range.incr != 1) text += ":" + std::to_string(range.incr);
  return text;
}

}  // namespace

Error CheckBulkRange(const BulkRange& range) {
  if (range.start < 1 || range.end < range.start || range.incr < 1) {
    return Error(DRMAA_ERRNO_INVALID_ARGUMENT,
                 "bulk job range start=" + std::to_string(range.start) +
                     " end=" + std::to_string(range.end) + " incr=" + std::to_string(range.incr) +
                     ": expected 1 <= start <= end and incr >= 1");
  }
  return Error::None();
}

Expected<json> BuildSubmission(const TemplateValues& values, const SubmitContext& ctx,
                               const std::optional<BulkRange>& bulk) {
  const std::string command(values.Scalar(DRMAA_REMOTE_COMMAND));
  if (command.empty()) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 std::string(DRMAA_REMOTE_COMMAND) + ": expected the program to run, got none");
  }
  // 1. The native specification's flags.
  Expected<SubmitFlags> flags =
      ReadNativeSpecification(values.Scalar(DRMAA_NATIVE_SPECIFICATION), ctx.now);
  if (!flags) return flags.error();
  // 2. The attributes that fill a flag, and 3. the working directory and paths.
  SLUICE_DRMAA_RETURN_IF_ERROR(MergeAttributes(values, ctx.now, *flags));
  SLUICE_DRMAA_RETURN_IF_ERROR(ResolvePaths(values, ctx, bulk.has_value(), *flags));
  // 4. The body `sluice submit` would send for these flags, with drmaa_v_env as the
  // submitter's environment: the job's is that alone, never the loading process's (a portal's
  // own variables are not its users' jobs').
  flags->command = {command};
  if (auto it = values.vectors.find(DRMAA_V_ENV); it != values.vectors.end()) {
    for (const std::string& entry : it->second) {
      const size_t eq = entry.find('=');
      flags->environment.insert_or_assign(entry.substr(0, eq), entry.substr(eq + 1));
    }
  }
  Result<json> body = client::BuildSubmitBody(*flags, ctx.submit_dir, ctx.now);
  if (!body) return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE, body.error().message());
  // 5. What DRMAA says exactly: an argv, a name, the bulk range.
  json argv = json::array({command});
  if (auto it = values.vectors.find(DRMAA_V_ARGV); it != values.vectors.end()) {
    for (const std::string& arg : it->second) argv.push_back(arg);
  }
  (*body)["command"] = std::move(argv);
  if (std::string_view name = values.Scalar(DRMAA_JOB_NAME); !name.empty()) {
    (*body)["name"] = std::string(name);
  }
  if (bulk) (*body)["array"] = ArrayText(*bulk);
  // 6. JSON carries only UTF-8: nlohmann throws when it writes other bytes, so they are found
  // here, with the attribute's errno, rather than as an internal error at the POST.
  try {
    (void)body->dump();
  } catch (const json::exception&) {
    return Error(DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                 "a value of the job template is not valid UTF-8 (the REST API carries only "
                 "UTF-8 text)");
  }
  return std::move(*body);
}

std::vector<std::string> BulkJobIds(int64_t id, const BulkRange& range) {
  std::vector<std::string> ids;
  for (int64_t i = range.start; i <= range.end; i += range.incr) {
    ids.push_back(std::to_string(id) + "[" + std::to_string(i) + "]");
  }
  return ids;
}

}  // namespace sluice::drmaa
