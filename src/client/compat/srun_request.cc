#include "client/compat/srun_request.h"

#include <charconv>
#include <set>

#include "client/compat/sbatch_request.h"

namespace sluice::client::compat {
namespace {

std::optional<int> Number(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

// Which of Slurm's GPU options `arg` is, if any.
std::optional<SlurmGpuOption> GpuOption(std::string_view arg) {
  if (arg == "-G" || arg == "--gpus") return SlurmGpuOption::kGpus;
  if (arg == "--gpus-per-node") return SlurmGpuOption::kGpusPerNode;
  if (arg == "--gpus-per-task") return SlurmGpuOption::kGpusPerTask;
  if (arg == "--gres") return SlurmGpuOption::kGres;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> SplitWords(std::string_view text, std::string_view separators) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find_first_of(separators, at);
    const std::string_view part = text.substr(at, end == std::string_view::npos ? end : end - at);
    if (!part.empty()) out.emplace_back(part);
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return out;
}

Result<SrunRequest> ParseSrun(std::span<const std::string> args, bool command_required) {
  SrunRequest f;
  static const std::set<std::string_view> kIgnoredWithValue = {
      "--mpi", "--cpu-bind", "--cpu_bind", "--export", "-J", "--job-name", "-c",
      "--cpus-per-task", "--mem", "--mem-per-cpu", "-t", "--time", "--distribution", "-m"};
  static const std::set<std::string_view> kIgnoredFlags = {
      "--exclusive", "--overlap", "-Q", "--quiet", "-u", "--unbuffered", "-v", "--verbose"};
  size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.empty() || arg[0] != '-') break;
    if (arg == "--") {
      ++i;
      break;
    }
    std::string value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    } else if (arg.size() > 2 && arg[1] != '-' &&
               std::string_view("nNwcJtmG").find(arg[1]) != std::string_view::npos) {
      value = arg.substr(2);  // -n4
      arg = arg.substr(0, 2);
      has_value = true;
    }
    auto take = [&]() -> Result<std::string> {
      if (has_value) return value;
      if (i + 1 >= args.size()) {
        return InvalidArgument("option '" + arg + "' requires an argument");
      }
      return std::string(args[++i]);
    };
    auto count = [&](std::optional<int>& out) -> Status {
      Result<std::string> text = take();
      if (!text) return text.error();
      out = Number(*text);
      return out ? Status::Ok() : InvalidArgument("invalid number for " + arg + ": " + *text);
    };
    if (arg == "-n" || arg == "--ntasks") {
      SLUICE_RETURN_IF_ERROR(count(f.ntasks));
    } else if (arg == "-N" || arg == "--nodes") {
      SLUICE_RETURN_IF_ERROR(count(f.nodes));
    } else if (arg == "--ntasks-per-node") {
      SLUICE_RETURN_IF_ERROR(count(f.per_node));
    } else if (arg == "-w" || arg == "--nodelist") {
      Result<std::string> list = take();
      if (!list) return list.error();
      if (list->find('[') != std::string::npos) {
        return InvalidArgument("--nodelist " + *list + ": give host names separated by commas");
      }
      f.nodelist = SplitWords(*list, ",");
    } else if (const std::optional<SlurmGpuOption> option = GpuOption(arg)) {
      Result<std::string> text = take();
      if (!text) return text.error();
      Result<SlurmGpus> gpus = ParseSlurmGpus(*option, *text);
      if (!gpus) return gpus.error().WithPrefix(arg + " " + *text);
      if (f.gpus && f.gpus->option != gpus->option) {
        return InvalidArgument(gpus->written + ": give one of --gpus, --gpus-per-node, "
                               "--gpus-per-task and --gres=gpu (" + f.gpus->written +
                               " is given already)");
      }
      f.gpus = std::move(*gpus);
    } else if (arg == "-K" || arg == "--kill-on-bad-exit") {
      f.kill_on_bad_exit = !has_value || value != "0";
    } else if (arg == "--pty") {
      f.pty = true;
    } else if (kIgnoredWithValue.contains(arg)) {
      if (Result<std::string> ignored = take(); !ignored) return ignored.error();
    } else if (kIgnoredFlags.contains(arg)) {
      continue;
    } else {
      return InvalidArgument("unrecognized option '" + std::string(args[i]) + "'");
    }
  }
  f.command.assign(args.begin() + static_cast<ptrdiff_t>(i), args.end());
  if (f.command.empty() && command_required) return InvalidArgument("no command given");
  return f;
}

Result<SubmitFlags> AllocationFlags(const SrunRequest& f) {
  // Laid out as sbatch lays out the same options, so that `srun -N 2 --gpus=4 CMD` asks what
  // `sbatch -N 2 --gpus=4` would.
  SbatchRequest same;
  if (f.ntasks) same.ntasks = *f.ntasks;
  if (f.nodes) same.nodes = *f.nodes;
  if (f.per_node) same.ntasks_per_node = *f.per_node;
  same.gpus = f.gpus;
  return ToSubmitFlags(same, "");
}

}  // namespace sluice::client::compat
