#include "cli/app.h"

#include <CLI/CLI.hpp>

namespace sluice::cli {

int Main(int argc, char** argv) {
  CLI::App app{"sluice: a batch workload scheduler for clusters"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}

}  // namespace sluice::cli
