// Subcommand registration: one function per subcommand, each in its own file
// (`sim_command.cc`, `gen_command.cc`, ...). app.cc calls them all.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string_view>

#include "client/rest_client.h"
#include "client/submit_request.h"

namespace sluice::cli {

// Each subcommand's callback stores its exit code in `exit_code` (0 ok, 1 runtime failure,
// 2 bad input or usage).
void RegisterSimCommand(CLI::App& app, int& exit_code);
void RegisterGenCommand(CLI::App& app, int& exit_code);
void RegisterResreqCommand(CLI::App& app, int& exit_code);
void RegisterConfigCommands(CLI::App& app, int& exit_code);  // config check, admin reconfig
void RegisterBenchCommand(CLI::App& app, int& exit_code);
void RegisterAgentCommand(CLI::App& app, int& exit_code);
void RegisterServerCommand(CLI::App& app, int& exit_code);
// submit, jobs, cancel, hold, release, hosts, queues, limits, queue, host
// (client_commands.cc); only the verb `only` when it is given (the front-end: CLI11 builds every
// option of every verb it is given, and a process runs one).
void RegisterClientCommands(CLI::App& app, int& exit_code, std::string_view only = {});
// history (history_command.cc).
void RegisterHistoryCommand(CLI::App& app, int& exit_code);
// sluice ui-login (ui_login_command.cc)
void RegisterUiLoginCommand(CLI::App& app, int& exit_code);
// modify, requeue (job_change_commands.cc).
void RegisterJobChangeCommands(CLI::App& app, int& exit_code);
// gen-history (gen_history_command.cc).
void RegisterGenHistoryCommand(CLI::App& app, int& exit_code);
// peek (peek_command.cc, R-UX-5).
void RegisterPeekCommand(CLI::App& app, int& exit_code);
void RegisterLaunchCommand(CLI::App& app, int& exit_code);
void RegisterRunCommands(CLI::App& app, int& exit_code);  // run, alloc
// rsv add|list|show|modify|delete|preview (rsv_command.cc, R-RSV-1).
void RegisterRsvCommand(CLI::App& app, int& exit_code);
// The flags that shape a job (queue, tasks, resources, run limit, name, project, directory,
// reservation, environment), shared by `submit` and the interactive `run` and `alloc`.
void AddJobShapeFlags(CLI::App* cmd, client::SubmitFlags& flags);
// What an interactive job's front end prints while the job waits and starts, to stderr unless
// set: bsub -I prints LSF's lines (`Job <N> is submitted to ...`, `<<Waiting for dispatch
// ...>>`, `<<Starting on HOST>>`).
struct InteractiveMessages {
  std::function<void(int64_t job, const std::string& queue)> submitted;
  std::function<void(const std::string& first_host)> started;
};
// `sluice peek -f`'s loop (and bpeek -f's): once a second, what the job wrote from byte `next`
// of its output on (`path`: ".../peek?" or ".../peek?index=I&"), until it stops running (Ok)
// or a request fails (its error).
Status FollowPeek(client::RestClient& rest, const std::string& path, int64_t next);
// `sluice run` (or `sluice alloc`) with these flags: srun outside a job, salloc, bsub -I.
int RunInteractiveJob(const client::SubmitFlags& flags, bool pty, bool alloc = false,
                      const InteractiveMessages& messages = {});

}  // namespace sluice::cli
