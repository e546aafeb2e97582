// `sluice-full`, the complete `sluice` (R-ARCH-3): every subcommand, wired in src/cli. Users run
// `sluice` (src/front_end_main.cc), which runs the client verbs itself and execs this for the rest.
#include "cli/app.h"

int main(int argc, char** argv) { return sluice::cli::Main(argc, argv); }
