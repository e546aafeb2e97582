#include "cli/commands.h"

namespace sluice::cli {

void RegisterSimCommand(CLI::App& app, int& /*exit_code*/) { app.add_subcommand("sim", "replay a workload"); }

}  // namespace sluice::cli
