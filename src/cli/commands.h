// Subcommand registration: one function per subcommand, each in its own file
// (`sim_command.cc`, `gen_command.cc`, ...). app.cc calls them all.
#pragma once

#include <CLI/CLI.hpp>

namespace sluice::cli {

void RegisterSimCommand(CLI::App& app);
void RegisterGenCommand(CLI::App& app);

}  // namespace sluice::cli
