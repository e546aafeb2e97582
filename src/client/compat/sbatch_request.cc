#include "client/compat/sbatch_request.h"

#include <charconv>

#include "client/compat/gpu_request.h"
#include "client/compat/memory.h"
#include "client/compat/options.h"
#include "client/compat/slurm_values.h"

namespace sluice::client::compat {
namespace {

enum Opt {
  kJobName,
  kOutput,
  kError,
  kPartition,
  kTime,
  kAccount,
  kChdir,
  kDependency,
  kBegin,
  kArray,
  kHold,
  kExclusive,
  kPriority,
  kExport,
  kWrap,
  kParsable,
  kWait,
  kQuiet,
  kVerbose,
  kNtasks,
  kCpusPerTask,
  kNodes,
  kNtasksPerNode,
  kMem,
  kMemPerCpu,
  kGpus,
  kGpusPerNode,
  kGpusPerTask,
  kGres,
  kReservation,
  kIgnored,   // accepted without effect
  kRefused,   // documented by sbatch, not honoured by Sluice
};

constexpr OptionSpec kOptions[] = {
    {"-J", "--job-name", true, kJobName},
    {"-o", "--output", true, kOutput},
    {"-e", "--error", true, kError},
    {"-p", "--partition", true, kPartition},
    {"-t", "--time", true, kTime},
    {"-A", "--account", true, kAccount},
    {"-D", "--chdir", true, kChdir},
    {"-d", "--dependency", true, kDependency},
    {"-b", "--begin", true, kBegin},
    {"-a", "--array", true, kArray},
    {"-H", "--hold", false, kHold},
    {"", "--exclusive", true, kExclusive, true},
    {"", "--priority", true, kPriority},
    {"", "--export", true, kExport},
    {"", "--wrap", true, kWrap},
    {"", "--parsable", false, kParsable},
    {"-W", "--wait", false, kWait},
    {"-Q", "--quiet", false, kQuiet},
    {"-v", "--verbose", false, kVerbose},
    {"-n", "--ntasks", true, kNtasks},
    {"-c", "--cpus-per-task", true, kCpusPerTask},
    {"-N", "--nodes", true, kNodes},
    {"", "--ntasks-per-node", true, kNtasksPerNode},
    {"", "--mem", true, kMem},
    {"", "--mem-per-cpu", true, kMemPerCpu},
    {"", "--mail-type", true, kIgnored},
    {"", "--mail-user", true, kIgnored},
    {"", "--requeue", false, kIgnored},
    {"", "--no-requeue", false, kIgnored},
    {"", "--comment", true, kIgnored},
    {"-q", "--qos", true, kIgnored},
    {"", "--propagate", true, kIgnored, true},
    {"", "--time-min", true, kIgnored},
    {"", "--kill-on-invalid-dep", true, kIgnored},
    {"-C", "--constraint", true, kRefused},
    {"", "--gres", true, kGres},
    {"-G", "--gpus", true, kGpus},
    {"-w", "--nodelist", true, kRefused},
    {"-x", "--exclude", true, kRefused},
    {"-L", "--licenses", true, kRefused},
    {"", "--signal", true, kRefused},
    {"-i", "--input", true, kRefused},
    {"", "--reservation", true, kReservation},
    {"-M", "--clusters", true, kRefused},
    {"-m", "--distribution", true, kRefused},
    {"-s", "--oversubscribe", false, kRefused},
    {"", "--contiguous", false, kRefused},
    {"", "--deadline", true, kRefused},
    {"", "--export-file", true, kRefused},
    {"", "--get-user-env", true, kRefused, true},
    {"", "--open-mode", true, kRefused},
    {"", "--nice", true, kRefused, true},
    {"", "--test-only", false, kRefused},
    {"", "--uid", true, kRefused},
    {"", "--gid", true, kRefused},
    {"", "--mem-per-gpu", true, kRefused},
    {"", "--cpus-per-gpu", true, kRefused},
    {"", "--gpus-per-node", true, kGpusPerNode},
    {"", "--gpus-per-task", true, kGpusPerTask},
    {"", "--ntasks-per-core", true, kRefused},
    {"", "--ntasks-per-socket", true, kRefused},
    {"", "--threads-per-core", true, kRefused},
    {"-k", "--no-kill", true, kRefused, true},
    {"-F", "--nodefile", true, kRefused},
    {"", "--switches", true, kRefused},
    {"", "--wckey", true, kRefused},
    {"", "--tmp", true, kRefused},
    {"-S", "--core-spec", true, kRefused},
};

std::optional<int64_t> PositiveInt(std::string_view text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1) {
    return std::nullopt;
  }
  return value;
}

// 1-100%10, 1,5,7-9, 1-99:2: digits and - , : % only (Sluice checks the rest).
bool IsArraySpec(std::string_view value) {
  return !value.empty() && value.find_first_not_of("0123456789-,:%") == std::string_view::npos;
}

// Slurm's words for a bad value: "Invalid --time specification".
Status Invalid(std::string_view long_name) {
  return InvalidArgument("Invalid " + std::string(long_name) + " specification");
}

std::string_view LongNameOf(int id) {
  for (const OptionSpec& spec : kOptions) {
    if (spec.id == id) return spec.long_name;
  }
  return "";
}

// --nodes: N or N-N (Sluice has no node-count range).
Status SetNodes(std::string_view value, SbatchRequest& r) {
  const size_t dash = value.find('-');
  const auto low = PositiveInt(value.substr(0, dash));
  const auto high = dash == std::string_view::npos ? low : PositiveInt(value.substr(dash + 1));
  if (!low || !high) return Invalid("--nodes");
  if (*low != *high) {
    return Status(StatusCode::kFailedPrecondition,
                  "--nodes=" + std::string(value) + ": a range of node counts is not supported by "
                  "Sluice; give one count");
  }
  r.nodes = *low;
  return Status::Ok();
}

Status SetCount(int id, std::string_view value, SbatchRequest& r) {
  const auto count = PositiveInt(value);
  if (!count) return Invalid(LongNameOf(id));
  if (id == kNtasks) r.ntasks = count;
  if (id == kCpusPerTask) r.cpus_per_task = count;
  if (id == kNtasksPerNode) r.ntasks_per_node = count;
  return Status::Ok();
}

Status SetMemory(int id, std::string_view value, SbatchRequest& r) {
  Result<int64_t> mb = ParseMemoryMb(value, MemoryDialect::kSlurm);
  if (!mb) return Invalid(LongNameOf(id));
  if (*mb == 0) {
    return Status(StatusCode::kFailedPrecondition,
                  std::string(LongNameOf(id)) + "=0 (all of a node's memory) is not supported by "
                  "Sluice; give a size");
  }
  (id == kMem ? r.mem_mb : r.mem_per_cpu_mb) = *mb;
  return Status::Ok();
}

// --gpus, --gpus-per-node, --gpus-per-task or --gres=gpu: one of them (a later one of the same
// option wins, as for any option; two different ones would each say how many GPUs there are).
Status SetGpus(int id, std::string_view value, SbatchRequest& r) {
  const SlurmGpuOption option = id == kGpus          ? SlurmGpuOption::kGpus
                                : id == kGpusPerNode ? SlurmGpuOption::kGpusPerNode
                                : id == kGpusPerTask ? SlurmGpuOption::kGpusPerTask
                                                     : SlurmGpuOption::kGres;
  Result<SlurmGpus> gpus = ParseSlurmGpus(option, value);
  if (!gpus) return gpus.error();
  if (r.gpus && r.gpus->option != option) {
    return Status(StatusCode::kFailedPrecondition,
                  gpus->written + ": give one of --gpus, --gpus-per-node, --gpus-per-task and "
                  "--gres=gpu (" + r.gpus->written + " is given already)");
  }
  r.gpus = std::move(*gpus);
  return Status::Ok();
}

Status SetTimeOrPlace(int id, const std::string& value, int64_t now, SbatchRequest& r) {
  switch (id) {
    case kTime: {
      Result<int64_t> seconds = ParseSlurmTimeLimit(value);
      if (!seconds) return Invalid("--time");
      r.time_limit = *seconds;
      return Status::Ok();
    }
    case kDependency: {
      Result<std::string> depend = TranslateSlurmDependency(value);
      if (!depend) return InvalidArgument("Invalid dependency specification: " + value);
      r.depend = *depend;
      return Status::Ok();
    }
    case kBegin: {
      Result<std::string> begin = TranslateSlurmBegin(value, now);
      if (!begin) return Invalid("--begin");
      r.begin = *begin;
      return Status::Ok();
    }
    case kPriority: {
      int64_t priority = 0;
      auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), priority);
      if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
        return Invalid("--priority");
      }
      r.priority = priority;
      return Status::Ok();
    }
    case kNodes:
      return SetNodes(value, r);
    case kMem:
    case kMemPerCpu:
      return SetMemory(id, value, r);
    case kGpus:
    case kGpusPerNode:
    case kGpusPerTask:
    case kGres:
      return SetGpus(id, value, r);
    default:
      return SetCount(id, value, r);
  }
}

// The text options: their value as given (Sluice checks them at submission).
std::optional<std::string>* TextField(int id, SbatchRequest& r) {
  switch (id) {
    case kJobName:
      return &r.name;
    case kOutput:
      return &r.output;
    case kError:
      return &r.error;
    case kPartition:
      return &r.partition;
    case kAccount:
      return &r.account;
    case kChdir:
      return &r.chdir;
    case kArray:
      return &r.array;
    case kExport:
      return &r.export_spec;
    case kWrap:
      return &r.wrap;
    case kReservation:
      return &r.reservation;
    default:
      return nullptr;
  }
}

Status Apply(const ParsedOption& option, int64_t now, SbatchRequest& r) {
  switch (option.id) {
    case kHold:
      r.hold = true;
      return Status::Ok();
    case kExclusive:
      if (option.has_value && option.value != "user" && option.value != "mcs") {
        return Invalid("--exclusive");
      }
      r.exclusive = true;
      return Status::Ok();
    case kParsable:
      r.parsable = true;
      return Status::Ok();
    case kWait:
      r.wait = true;
      return Status::Ok();
    case kQuiet:
      r.quiet = true;
      return Status::Ok();
    case kVerbose:
      return Status::Ok();
    case kIgnored:
      r.ignored.push_back(option.written);
      return Status::Ok();
    case kRefused: {
      const std::string name = option.written.substr(0, option.written.find('='));
      return Status(StatusCode::kFailedPrecondition,
                    name + " is not supported by Sluice (docs/compat.md)");
    }
    default:
      break;
  }
  if (option.id == kArray && !IsArraySpec(option.value)) return Invalid("--array");
  if (std::optional<std::string>* field = TextField(option.id, r)) {
    if (option.value.empty()) return Invalid(LongNameOf(option.id));
    *field = option.value;
    return Status::Ok();
  }
  return SetTimeOrPlace(option.id, option.value, now, r);
}

// Replaces %x (name) and %u (user; left as written when `user` is empty) in an output pattern; Sluice replaces %j %A %a itself.
std::string ExpandNameAndUser(const std::string& pattern, const std::string& name,
                              const std::string& user) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() &&
        (pattern[i + 1] == 'x' || (pattern[i + 1] == 'u' && !user.empty()))) {
      out += pattern[++i] == 'x' ? name : user;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Result<SbatchCommandLine> ParseSbatchArgs(std::span<const std::string> args, int64_t now) {
  Result<ParsedArgs> parsed = ParseOptions(args, kOptions, OptionStyle::kGetopt, true);
  if (!parsed) return parsed.error();
  SbatchCommandLine out;
  for (const ParsedOption& option : parsed->options) {
    SLUICE_RETURN_IF_ERROR(Apply(option, now, out.request));
  }
  out.operands = std::move(parsed->operands);
  return out;
}

Status ApplySbatchDirective(std::span<const std::string> words, int64_t now,
                            SbatchRequest& request) {
  Result<ParsedArgs> parsed = ParseOptions(words, kOptions, OptionStyle::kGetopt, false);
  if (!parsed) return parsed.error();
  if (!parsed->operands.empty()) {
    return InvalidArgument("expected an option, got the word '" + parsed->operands.front() + "'");
  }
  SbatchRequest lines = request;
  for (const ParsedOption& option : parsed->options) {
    if (option.id == kParsable || option.id == kWait || option.id == kWrap) {
      return InvalidArgument(option.written + " is an option of the command line only");
    }
    SLUICE_RETURN_IF_ERROR(Apply(option, now, lines));
  }
  request = std::move(lines);
  return Status::Ok();
}

SbatchRequest MergeSbatch(const SbatchRequest& command_line, const SbatchRequest& directives) {
  SbatchRequest out = command_line;
  const auto fill = [](auto& field, const auto& fallback) {
    if (!field) field = fallback;
  };
  fill(out.name, directives.name);
  fill(out.output, directives.output);
  fill(out.error, directives.error);
  fill(out.partition, directives.partition);
  fill(out.account, directives.account);
  fill(out.chdir, directives.chdir);
  fill(out.array, directives.array);
  fill(out.reservation, directives.reservation);
  fill(out.export_spec, directives.export_spec);
  fill(out.depend, directives.depend);
  fill(out.begin, directives.begin);
  fill(out.time_limit, directives.time_limit);
  fill(out.ntasks, directives.ntasks);
  fill(out.cpus_per_task, directives.cpus_per_task);
  fill(out.ntasks_per_node, directives.ntasks_per_node);
  fill(out.nodes, directives.nodes);
  fill(out.priority, directives.priority);
  fill(out.mem_mb, directives.mem_mb);
  fill(out.mem_per_cpu_mb, directives.mem_per_cpu_mb);
  fill(out.gpus, directives.gpus);
  fill(out.exclusive, directives.exclusive);
  fill(out.hold, directives.hold);
  out.ignored.insert(out.ignored.begin(), directives.ignored.begin(), directives.ignored.end());
  return out;
}

Result<SubmitFlags> ToSubmitFlags(const SbatchRequest& r, const std::string& user) {
  // 1. Slurm's CPUs are Sluice's slots: tasks x CPUs per task.
  const int64_t cpus = r.cpus_per_task.value_or(1);
  const int64_t nodes = r.nodes.value_or(0);
  const int64_t per_node = r.ntasks_per_node.value_or(0);
  const int64_t ntasks =
      r.ntasks.value_or(std::max<int64_t>({1, nodes, per_node > 0 ? per_node * std::max<int64_t>(
                                                                                      nodes, 1)
                                                                  : 0}));
  if (per_node > 0 && per_node > ntasks) {
    return InvalidArgument("--ntasks-per-node=" + std::to_string(per_node) +
                           " is above --ntasks=" + std::to_string(ntasks));
  }
  if (nodes > ntasks) {
    return InvalidArgument("--nodes=" + std::to_string(nodes) + " asks more nodes than tasks (" +
                           std::to_string(ntasks) + ")");
  }
  const int64_t slots = ntasks * cpus;
  // 2. How they spread over hosts, and how many share a host (for --mem, per host).
  std::string span;
  int64_t per_host = slots;
  if (slots == 1 && nodes != 1) {
    // one slot: nothing to spread (and the queue's default request stays in force)
  } else if (nodes == 1 || ntasks == 1) {
    span = "span[hosts=1]";
  } else if (per_node > 0) {
    per_host = per_node * cpus;
    span = "span[ptile=" + std::to_string(per_host) + "]";
  } else if (nodes > 1) {
    per_host = CeilDiv(ntasks, nodes) * cpus;
    span = "span[ptile=" + std::to_string(per_host) + "]";
  } else if (cpus > 1) {
    per_host = cpus;
    span = "span[ptile=" + std::to_string(cpus) + "]";
  }
  // 3. Memory per slot (Sluice's rusage is per task).
  std::optional<int64_t> mem;
  if (r.mem_per_cpu_mb) mem = *r.mem_per_cpu_mb;
  if (r.mem_mb) mem = CeilDiv(*r.mem_mb, per_host);
  std::string resreq = span;
  if (mem) resreq += (resreq.empty() ? "" : " ") + ("rusage[mem=" + std::to_string(*mem) + "]");
  // 4. GPUs: the gpu[] section (client/compat/gpu_request.h); --gpus needs the node count.
  if (r.gpus) {
    Result<std::string> gpu = SlurmGpuSection(*r.gpus, nodes);
    if (!gpu) return gpu.error();
    resreq += (resreq.empty() ? "" : " ") + *gpu;
  }

  SubmitFlags f;
  if (r.ntasks || r.cpus_per_task || r.nodes || r.ntasks_per_node) f.tasks = std::to_string(slots);
  f.resreq = resreq;
  f.queue = r.partition.value_or("");
  f.name = r.name.value_or("");
  f.project = r.account.value_or("");
  f.cwd = r.chdir.value_or("");
  f.array = r.array.value_or("");
  f.reservation = r.reservation.value_or("");
  f.depend = r.depend.value_or("");
  f.begin = r.begin.value_or("");
  if (r.time_limit && *r.time_limit > 0) f.run_limit = std::to_string(*r.time_limit) + "s";
  f.exclusive = r.exclusive.value_or(false);
  f.hold = r.hold.value_or(false);
  f.priority = r.priority;
  if (r.output) f.output = ExpandNameAndUser(*r.output, f.name, user);
  if (r.error) f.error = ExpandNameAndUser(*r.error, f.name, user);
  return f;
}

}  // namespace sluice::client::compat
