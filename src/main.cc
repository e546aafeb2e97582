// `sluice-full`, the complete `sluice` (R-ARCH-3): every subcommand, wired in src/cli. Users run
// `sluice` (src/front_end_main.cc), which runs the client verbs itself and execs this for the rest.
#include <cstdlib>
#include <cstring>

#include "agent/process_image.h"
#include "cli/app.h"

#ifdef SLUICE_WITH_MIMALLOC
#include <mimalloc.h>
#endif

int main(int argc, char** argv) {
  // Before anything reads argv: secrets read from it are overwritten later (issue 48).
  sluice::agent::RememberArgvArea(argc, argv);
#ifdef SLUICE_WITH_MIMALLOC
  // A replay reads its jobs, records and state (~280 MB for a full trace) in no order a 4 KiB
  // page walk likes: on 2 MiB pages (transparent huge pages, which Debian grants on madvise)
  // it takes ~4 % less user time and no longer spends ~0.15 s in ~79,000 page faults
  // (docs/performance.md). Only for `sim`, a short batch run; the daemons keep small pages.
  // An operator's MIMALLOC_LARGE_OS_PAGES wins.
  if (argc > 1 && std::strcmp(argv[1], "sim") == 0 &&
      std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) {
    mi_option_enable(mi_option_large_os_pages);
  }
#endif
  return sluice::cli::Main(argc, argv);
}
