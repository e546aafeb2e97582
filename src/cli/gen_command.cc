#include "cli/commands.h"

namespace sluice::cli {

void RegisterGenCommand(CLI::App& app) { app.add_subcommand("gen", "write a synthetic workload"); }

}  // namespace sluice::cli
