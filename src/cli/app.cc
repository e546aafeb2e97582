#include "cli/app.h"

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace sluice::cli {

int Main(int argc, char** argv) {
  CLI::App app{"sluice: a batch workload scheduler for clusters"};
  app.require_subcommand(1);
  RegisterSimCommand(app);
  RegisterGenCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}

}  // namespace sluice::cli
