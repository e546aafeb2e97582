// `sluice launch [-n N] [--pty] HOST|--all WORD...` (R-LAUNCH-1; blaunch, an ssh drop-in): runs
// the words, joined with spaces and run by /bin/sh -c as ssh runs them, on a host of the
// current job's allocation; each run is a step of the job (client/step_launch.h). `--all`
// runs one task on every host of the allocation; `-n N` N tasks over the hosts given, in
// turn. Exit: the task's (128 + signal when killed), 255 when it could not run (as ssh), 2
// outside a job or for a host outside the allocation.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "client/step_launch.h"

namespace sluice::cli {
namespace {

struct LaunchCommand {
  std::string server;
  std::string token;
  int tasks = 0;
  bool all = false;
  bool pty = false;
  std::vector<std::string> words;  // HOST WORD... (WORD... with --all)
};

int RunLaunch(const LaunchCommand& cmd) {
  std::string credential;
  Result<int64_t> job = client::CurrentJob(credential);
  Result<client::ClientOptions> options =
      job ? client::StepClientOptions(cmd.server, cmd.token, credential)
          : Result<client::ClientOptions>(job.error());
  if (!options) {
    std::cerr << "sluice launch: " << options.error().message() << "\n";
    return 2;
  }
  std::vector<std::string> hosts;
  size_t first_word = 0;
  if (cmd.all) {
    for (const auto& [host, slots] : client::AllocationHosts()) hosts.push_back(host);
  } else if (!cmd.words.empty()) {
    hosts = {cmd.words[0]};
    first_word = 1;
  }
  std::string command;
  for (size_t i = first_word; i < cmd.words.size(); ++i) {
    command += (i > first_word ? " " : "") + cmd.words[i];  // ssh's convention: joined
  }
  if (hosts.empty() || command.empty()) {
    std::cerr << "sluice launch: usage: sluice launch [-n N] [--pty] HOST|--all COMMAND [ARGS...]\n";
    return 2;
  }
  client::StepLaunch launch{.client = *options, .job = *job, .command = command, .pty = cmd.pty};
  const int tasks = cmd.tasks > 0 ? cmd.tasks : static_cast<int>(hosts.size());
  for (int task = 0; task < tasks; ++task) {
    launch.tasks.push_back({.host = hosts[static_cast<size_t>(task) % hosts.size()], .task = task});
  }
  return client::RunSteps(launch);
}

}  // namespace

void RegisterLaunchCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "launch", "run a command on a host of the current job's allocation (blaunch; an ssh drop-in)");
  auto c = std::make_shared<LaunchCommand>();
  cmd->add_option("--server", c->server, "controller URL (default $SLUICE_SERVER)");
  cmd->add_option("--token", c->token, "user token (default: the job's credential)");
  cmd->add_option("-n,--tasks", c->tasks, "run N tasks over the hosts given")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--all", c->all, "one task on every host of the allocation");
  cmd->add_flag("--pty", c->pty, "run on a pseudo-terminal");
  // One positional, then everything is the command's, options included (`orted -mca ...`):
  // a vector positional would take only the words that do not look like options.
  auto first = std::make_shared<std::string>();
  cmd->add_option("host", *first, "HOST (then COMMAND [ARGS...], joined and run by /bin/sh -c)");
  cmd->prefix_command();
  cmd->callback([c, cmd, first, &exit_code] {
    if (!first->empty()) c->words.push_back(*first);
    for (const std::string& word : cmd->remaining()) c->words.push_back(word);
    exit_code = RunLaunch(*c);
  });
}

}  // namespace sluice::cli
