// The `sluice` command line: subcommands registered with CLI11.
#pragma once

namespace sluice::cli {

// Parses argv, runs the chosen subcommand and returns the process exit code.
int Main(int argc, char** argv);

}  // namespace sluice::cli
