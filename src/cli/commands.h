// Subcommand registration: one function per subcommand, each in its own file
// (`sim_command.cc`, `gen_command.cc`, ...). app.cc calls them all.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

// Each subcommand's callback stores its exit code in `exit_code` (0 ok, 1 runtime failure,
// 2 bad input or usage).
void RegisterSimCommand(CLI::App& app, int& exit_code);
void RegisterGenCommand(CLI::App& app, int& exit_code);
void RegisterResreqCommand(CLI::App& app, int& exit_code);
void RegisterBenchCommand(CLI::App& app, int& exit_code);
void RegisterAgentCommand(CLI::App& app, int& exit_code);
void RegisterServerCommand(CLI::App& app, int& exit_code);
// submit, jobs, cancel, hold, release, hosts, queues, limits (client_commands.cc).
void RegisterClientCommands(CLI::App& app, int& exit_code);
// peek (peek_command.cc, R-UX-5).
void RegisterPeekCommand(CLI::App& app, int& exit_code);

}  // namespace sluice::cli
