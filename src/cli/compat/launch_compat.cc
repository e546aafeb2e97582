// `srun` and `blaunch` inside a job (R-COMPAT-2, R-LAUNCH-1): steps on the job's allocation
// through client/step_launch.h.
//
// srun, with the options of client/compat/srun_request.h:
//   Tasks are laid out as Slurm's default block distribution: up to each node's slots in
//   allocation order, one per node first when there are fewer tasks than nodes, wrapping when
//   there are more. Each task gets SLURM_PROCID, SLURM_NODEID, SLURM_LOCALID and the step's
//   SLURM_STEP_NODELIST, SLURM_STEP_NUM_NODES, SLURM_STEP_NUM_TASKS. The command's words are
//   quoted for the remote shell, so they arrive as given (srun execs them, no shell).
//   Inside a job a step runs with the job's GPUs on each of its hosts: the GPU options are
//   checked and the set is not narrowed (as --mem is not).
//   Outside a job it is an interactive job of its own (`sluice run`, R-LAUNCH-3) with -n as
//   its tasks, --ntasks-per-node as span[ptile=N], --pty, and its GPU options.
// salloc [-n N] [-N N] [--ntasks-per-node N] [GPU options]: `sluice alloc` (a shell here
//   holding the allocation).
// blaunch, as LSF's: `blaunch [-n] [-z "h1 h2 ..." | -u HOSTFILE | HOST] COMMAND [ARGS...]`;
//   the words are joined and run by the remote shell (an ssh drop-in); -n: no stdin.
// Exit codes: the tasks' (client/step_launch.h); a bad option 1 for srun (as Slurm's), 255 for
// blaunch (as LSF's).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "cli/compat/compat_commands.h"
#include "cli/commands.h"
#include "client/compat/srun_request.h"
#include "client/step_launch.h"

namespace sluice::cli::compat {
namespace {

constexpr int kSrunUsage = 1;
constexpr int kBlaunchUsage = 255;

int Refuse(const char* program, const std::string& message, int code) {
  std::cerr << program << ": error: " << message << "\n";
  return code;
}

// The tasks of an srun step over `hosts` (name, slots), block distribution.
std::vector<client::StepTask> SrunTasks(const client::compat::SrunRequest& f,
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
  Result<client::compat::SrunRequest> flags = client::compat::ParseSrun(args);
  if (!flags) return Refuse("srun", flags.error().message(), kSrunUsage);
  if (!job) {  // outside a job: an interactive job of its own (R-LAUNCH-3), as srun does
    Result<client::SubmitFlags> submit = client::compat::AllocationFlags(*flags);
    if (!submit) return Refuse("srun", submit.error().message(), kSrunUsage);
    submit->command = flags->command;
    return RunInteractiveJob(*submit, flags->pty);
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
  Result<client::compat::SrunRequest> flags = client::compat::ParseSrun(args, false);
  if (!flags) return Refuse("salloc", flags.error().message(), kSrunUsage);
  if (!flags->command.empty()) {
    return Refuse("salloc", "a command after salloc's options is not supported; run it in the shell salloc starts", kSrunUsage);
  }
  Result<client::SubmitFlags> submit = client::compat::AllocationFlags(*flags);
  if (!submit) return Refuse("salloc", submit.error().message(), kSrunUsage);
  return RunInteractiveJob(*submit, false, true);
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
        hosts = client::compat::SplitWords(args[++i], " ,");
      } else {
        std::ifstream file(args[++i]);
        if (!file) return Refuse("blaunch", "cannot read host file " + args[i], kBlaunchUsage);
        for (std::string line; std::getline(file, line);) {
          for (const std::string& host : client::compat::SplitWords(line, " \t")) hosts.push_back(host);
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
