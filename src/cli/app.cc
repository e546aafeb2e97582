#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <optional>

#include "cli/commands.h"
#include "cli/compat/compat_commands.h"
#include "client/http_transport.h"

namespace sluice::cli {

int Main(int argc, char** argv) {
  client::EnableHttps();  // the complete binary speaks https:// too (cli/front_end.h)
  // Under a Slurm or LSF name (R-COMPAT-1), that command.
  if (std::optional<int> code = compat::RunCompatMain(argc, argv)) return *code;
  CLI::App app{"sluice: a batch workload scheduler for clusters"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sluice " SLUICE_VERSION);
  int exit_code = 0;
  RegisterSimCommand(app, exit_code);
  RegisterGenCommand(app, exit_code);
  RegisterResreqCommand(app, exit_code);
  RegisterConfigCommands(app, exit_code);
  RegisterBenchCommand(app, exit_code);
  RegisterAgentCommand(app, exit_code);
  RegisterServerCommand(app, exit_code);
  RegisterClientCommands(app, exit_code);
  RegisterHistoryCommand(app, exit_code);
  RegisterUiLoginCommand(app, exit_code);
  RegisterJobChangeCommands(app, exit_code);
  RegisterGenHistoryCommand(app, exit_code);
  RegisterPeekCommand(app, exit_code);
  RegisterLaunchCommand(app, exit_code);
  RegisterRunCommands(app, exit_code);
  RegisterRsvCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Prints the message (or the help); a usage mistake exits 2, as the verbs document,
    // instead of CLI11's own numbers (105, 106, ...).
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}

}  // namespace sluice::cli
