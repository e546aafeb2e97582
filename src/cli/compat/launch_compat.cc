// `srun` and `blaunch` inside a job (R-COMPAT-2, R-LAUNCH-1): steps on the job's allocation
// through client/step_launch.h.
//
// srun, as Open MPI's Slurm launcher and `srun -n1 CMD` in Snakemake jobs call it:
//   -n/--ntasks N, -N/--nodes N, --ntasks-per-node N, -w/--nodelist h1,h2, -K/--kill-on-bad-exit,
//   --pty; accepted and ignored (a step runs in the job's containment and environment):
//   --mpi, --cpu-bind/--cpu_bind, --export, -J/--job-name, --exclusive, --overlap,
//   -c/--cpus-per-task, --mem*, -t/--time, -Q/--quiet, -u/--unbuffered.
//   Tasks are laid out as Slurm's default block distribution: up to each node's slots in
//   allocation order, one per node first when there are fewer tasks than nodes, wrapping when
//   there are more. Each task gets SLURM_PROCID, SLURM_NODEID, SLURM_LOCALID and the step's
//   SLURM_STEP_NODELIST, SLURM_STEP_NUM_NODES, SLURM_STEP_NUM_TASKS. The command's words are
//   quoted for the remote shell, so they arrive as given (srun execs them, no shell).
//   Outside a job it is an interactive job of its own (`sluice run`, R-LAUNCH-3) with -n as
//   its tasks, --ntasks-per-node as span[ptile=N] and --pty.
// salloc [-n N] [--ntasks-per-node N]: `sluice alloc` (a shell here holding the allocation).
// blaunch, as LSF's: `blaunch [-n] [-z "h1 h2 ..." | -u HOSTFILE | HOST] COMMAND [ARGS...]`;
//   the words are joined and run by the remote shell (an ssh drop-in); -n: no stdin.
// Exit codes: the tasks' (client/step_launch.h); a bad option 1 for srun (as Slurm's), 255 for
// blaunch (as LSF's).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "cli/compat/compat_commands.h"
#include "cli/commands.h"
#include "client/step_launch.h"

namespace sluice::cli::compat {
namespace {

constexpr int kSrunUsage = 1;
constexpr int kBlaunchUsage = 255;

int Refuse(const char* program, const std::string& message, int code) {
  std::cerr << program << ": error: " << message << "\n";
  return code;
}

std::optional<int> Number(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

std::vector<std::string> SplitList(std::string_view text, std::string_view separators) {
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

struct SrunFlags {
  std::optional<int> ntasks, nodes, per_node;
  std::vector<std::string> nodelist;
  bool kill_on_bad_exit = false;
  bool pty = false;
  std::vector<std::string> command;
};

// Parses srun's options up to the command. Errors name the option.
Result<SrunFlags> ParseSrun(Args args, bool command_required = true) {
  SrunFlags f;
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
    } else if (arg.size() > 2 && arg[1] != '-' && std::string("nNwcJtm").find(arg[1]) != std::string::npos) {
      value = arg.substr(2);  // -n4
      arg = arg.substr(0, 2);
      has_value = true;
    }
    auto take = [&]() -> Result<std::string> {
      if (has_value) return value;
      if (i + 1 >= args.size()) return InvalidArgument("option '" + arg + "' requires an argument");
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
      f.nodelist = SplitList(*list, ",");
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

// The tasks of an srun step over `hosts` (name, slots), block distribution.
std::vector<client::StepTask> SrunTasks(const SrunFlags& f,
                                        std::vector<std::pair<std::string, int>> hosts) {
  if (!f.nodelist.empty()) {
    std::erase_if(hosts, [&](const auto& h) {
      return std::find(f.nodelist.begin(), f.nodelist.end(), h.first) == f.nodelist.end();
    });
  }
  if (f.nodes && static_cast<size_t>(*f.nodes) < hosts.size()) hosts.resize(*f.nodes);
  std::vector<int> per_host(hosts.size(), 0);
  int total_slots = 0;
  for (const auto& h : hosts) total_slots += h.second;
  int ntasks = f.ntasks.value_or(f.per_node ? *f.per_node * static_cast<int>(hosts.size())
                                            : (f.nodes ? static_cast<int>(hosts.size()) : total_slots));
  if (f.per_node) {
    for (int& n : per_host) n = *f.per_node;
    ntasks = std::min(ntasks, *f.per_node * static_cast<int>(hosts.size()));
  } else if (ntasks <= static_cast<int>(hosts.size())) {
    for (int t = 0; t < ntasks; ++t) per_host[t] = 1;
  } else {
    int left = ntasks;
    for (size_t h = 0; h < hosts.size() && left > 0; ++h) {
      per_host[h] = std::min(left, hosts[h].second);
      left -= per_host[h];
    }
    for (size_t h = 0; left > 0; h = (h + 1) % hosts.size(), --left) ++per_host[h];
  }
  std::string nodelist;
  int used_nodes = 0;
  for (size_t h = 0; h < hosts.size(); ++h) {
    if (per_host[h] == 0) continue;
    nodelist += (nodelist.empty() ? "" : ",") + hosts[h].first;
    ++used_nodes;
  }
  std::vector<client::StepTask> tasks;
  int task = 0, node = 0;
  for (size_t h = 0; h < hosts.size(); ++h) {
    if (per_host[h] == 0) continue;
    for (int local = 0; local < per_host[h] && task < ntasks; ++local, ++task) {
      tasks.push_back({.host = hosts[h].first,
                       .task = task,
                       .env = {{"SLURM_PROCID", std::to_string(task)},
                               {"SLURM_NODEID", std::to_string(node)},
                               {"SLURM_LOCALID", std::to_string(local)},
                               {"SLURM_STEP_NODELIST", nodelist},
                               {"SLURM_STEP_NUM_NODES", std::to_string(used_nodes)},
                               {"SLURM_STEP_NUM_TASKS", std::to_string(ntasks)},
                               {"SLUICE_NODEID", std::to_string(node)}}});
    }
    ++node;
  }
  return tasks;
}

}  // namespace

int Srun(Args args) {
  std::string credential;
  Result<int64_t> job = client::CurrentJob(credential);
  Result<SrunFlags> flags = ParseSrun(args);
  if (!flags) return Refuse("srun", flags.error().message(), kSrunUsage);
  if (!job) {  // outside a job: an interactive job of its own (R-LAUNCH-3), as srun does
    client::SubmitFlags submit;
    if (flags->ntasks) submit.tasks = std::to_string(*flags->ntasks);
    if (flags->per_node) submit.resreq = "span[ptile=" + std::to_string(*flags->per_node) + "]";
    submit.command = flags->command;
    return RunInteractiveJob(submit, flags->pty);
  }
  Result<client::ClientOptions> options = client::StepClientOptions("", "", credential);
  if (!options) return Refuse("srun", options.error().message(), kSrunUsage);
  client::StepLaunch launch{.client = *options,
                            .job = *job,
                            .pty = flags->pty,
                            .kill_on_bad_exit = flags->kill_on_bad_exit,
                            .program = "srun"};
  for (const std::string& word : flags->command) {
    launch.command += (launch.command.empty() ? "" : " ") + client::ShellQuote(word);
  }
  launch.tasks = SrunTasks(*flags, client::AllocationHosts());
  if (launch.tasks.empty()) {
    return Refuse("srun", "no host of the job's allocation matches the request", kSrunUsage);
  }
  return client::RunSteps(launch);
}

int Salloc(Args args) {
  Result<SrunFlags> flags = ParseSrun(args, false);
  if (!flags) return Refuse("salloc", flags.error().message(), kSrunUsage);
  if (!flags->command.empty()) {
    return Refuse("salloc", "a command after salloc's options is not supported; run it in the shell salloc starts", kSrunUsage);
  }
  client::SubmitFlags submit;
  if (flags->ntasks) submit.tasks = std::to_string(*flags->ntasks);
  if (flags->per_node) submit.resreq = "span[ptile=" + std::to_string(*flags->per_node) + "]";
  return RunInteractiveJob(submit, false, true);
}

int Blaunch(Args args) {
  std::string credential;
  Result<int64_t> job = client::CurrentJob(credential);
  if (!job) return Refuse("blaunch", "blaunch runs only inside a job (LSB_JOBID is not set)", kBlaunchUsage);
  std::vector<std::string> hosts;
  bool no_stdin = false;
  size_t i = 0;
  for (; i < args.size() && args[i].starts_with("-"); ++i) {
    if (args[i] == "-n") {
      no_stdin = true;
    } else if ((args[i] == "-z" || args[i] == "-u") && i + 1 < args.size()) {
      if (args[i] == "-z") {
        hosts = SplitList(args[++i], " ,");
      } else {
        std::ifstream file(args[++i]);
        if (!file) return Refuse("blaunch", "cannot read host file " + args[i], kBlaunchUsage);
        for (std::string line; std::getline(file, line);) {
          for (const std::string& host : SplitList(line, " \t")) hosts.push_back(host);
        }
      }
    } else if (args[i] == "-use-login-shell" || args[i] == "-no-shell") {
      continue;
    } else {
      return Refuse("blaunch", "unknown option " + args[i], kBlaunchUsage);
    }
  }
  if (hosts.empty() && i < args.size()) hosts.push_back(args[i++]);
  std::string command;
  for (; i < args.size(); ++i) command += (command.empty() ? "" : " ") + args[i];
  if (hosts.empty() || command.empty()) {
    return Refuse("blaunch", "usage: blaunch [-n] [-z \"HOST ...\" | -u HOSTFILE | HOST] COMMAND",
                  kBlaunchUsage);
  }
  Result<client::ClientOptions> options = client::StepClientOptions("", "", credential);
  if (!options) return Refuse("blaunch", options.error().message(), kBlaunchUsage);
  if (no_stdin) {
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  }
  client::StepLaunch launch{.client = *options, .job = *job, .command = command,
                            .program = "blaunch"};
  for (size_t t = 0; t < hosts.size(); ++t) {
    launch.tasks.push_back({.host = hosts[t], .task = static_cast<int>(t)});
  }
  return client::RunSteps(launch);
}

}  // namespace sluice::cli::compat
