#include "cli/commands.h"

namespace sluice::cli {

void RegisterGenCommand(CLI::App& app, int& /*exit_code*/) { app.add_subcommand("gen", "write a synthetic workload"); }

}  // namespace sluice::cli
