#include "client/compat/bmod_request.h"

#include <charconv>

#include "client/compat/options.h"

namespace sluice::client::compat {
namespace {

enum Option {
  kQueue,
  kTasks,
  kName,
  kRunLimit,
  kResreq,
  kBegin,
  kDepend,
  kPriority,
  kNoRunLimit,
  kNoResreq,
  kNoBegin,
  kNoDepend,
  kNoPriority,
  kRefusedFlag,
  kRefusedValue,
};

constexpr OptionSpec kOptions[] = {
    {"-q", "", true, kQueue},          {"-n", "", true, kTasks},
    {"-J", "", true, kName},           {"-W", "", true, kRunLimit},
    {"-R", "", true, kResreq},         {"-b", "", true, kBegin},
    {"-w", "", true, kDepend},         {"-sp", "", true, kPriority},
    {"-Wn", "", false, kNoRunLimit},
    {"-Rn", "", false, kNoResreq},     {"-bn", "", false, kNoBegin},
    {"-wn", "", false, kNoDepend},     {"-spn", "", false, kNoPriority},
    {"-o", "", true, kRefusedValue},   {"-oo", "", true, kRefusedValue},
    {"-e", "", true, kRefusedValue},   {"-eo", "", true, kRefusedValue},
    {"-M", "", true, kRefusedValue},   {"-m", "", true, kRefusedValue},
    {"-P", "", true, kRefusedValue},   {"-G", "", true, kRefusedValue},
    {"-app", "", true, kRefusedValue}, {"-c", "", true, kRefusedValue},
    {"-x", "", false, kRefusedFlag},   {"-Jn", "", false, kRefusedFlag},
    {"-i", "", true, kRefusedValue},   {"-E", "", true, kRefusedValue},
    {"-L", "", true, kRefusedValue},   {"-u", "", true, kRefusedValue},
    {"-g", "", true, kRefusedValue},   {"-sla", "", true, kRefusedValue},
    {"-We", "", true, kRefusedValue},  {"-cwd", "", true, kRefusedValue},
    {"-rn", "", false, kRefusedFlag},  {"-r", "", false, kRefusedFlag},
    {"-N", "", false, kRefusedFlag},   {"-B", "", false, kRefusedFlag},
};

Status Apply(const ParsedOption& option, ModifyFlags& f) {
  const std::string& value = option.value;
  switch (option.id) {
    case kQueue: f.queue = value; break;
    case kTasks: f.tasks = value; break;
    case kName: f.name = value; break;
    case kRunLimit: f.run_limit = value; break;
    case kResreq: f.resreq = value; break;
    case kBegin: f.begin = value; break;
    case kDepend: f.depend = value; break;
    case kPriority: {
      int64_t priority = 0;
      const auto [end, error] =
          std::from_chars(value.data(), value.data() + value.size(), priority);
      if (error != std::errc() || end != value.data() + value.size()) {
        return InvalidArgument(option.written + " " + value + ": expected an integer priority");
      }
      f.priority = priority;
      break;
    }
    case kNoRunLimit: f.run_limit = "none"; break;
    case kNoResreq: f.resreq = ""; break;
    case kNoBegin: f.begin = "none"; break;
    case kNoDepend: f.depend = ""; break;
    case kNoPriority: f.priority = 0; break;
    default:
      return Status(StatusCode::kFailedPrecondition,
                    option.written + ": not supported by Sluice's bmod (docs/compat.md)");
  }
  return Status::Ok();
}

}  // namespace

Result<BmodCommandLine> ParseBmodArgs(std::span<const std::string> args) {
  Result<ParsedArgs> parsed = ParseOptions(args, kOptions, OptionStyle::kLsf, false);
  if (!parsed) return parsed.error();
  BmodCommandLine out;
  for (const ParsedOption& option : parsed->options) SLUICE_RETURN_IF_ERROR(Apply(option, out.flags));
  if (parsed->operands.size() != 1) {
    return InvalidArgument(parsed->operands.empty() ? "a job id is required"
                                                    : "one job id only (bmod changes one job)");
  }
  out.job = parsed->operands.front();
  const ModifyFlags& f = out.flags;
  if (!f.queue && !f.tasks && !f.name && !f.run_limit && !f.resreq && !f.begin && !f.depend &&
      !f.priority) {
    return InvalidArgument("no change was asked of job <" + out.job + ">");
  }
  return out;
}

}  // namespace sluice::client::compat
