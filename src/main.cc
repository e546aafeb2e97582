// The one `sluice` binary (R-ARCH-3): every subcommand is wired in src/cli.
#include "cli/app.h"

int main(int argc, char** argv) { return sluice::cli::Main(argc, argv); }
