// The `sluice` command users run (R-ARCH-3): the client verbs here, every other verb in the
// complete binary `sluice-full` (src/main.cc), see cli/front_end.h.
#include "cli/front_end.h"

int main(int argc, char** argv) { return sluice::cli::FrontEndMain(argc, argv); }
