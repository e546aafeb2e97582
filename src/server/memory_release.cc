#include "server/memory_release.h"

#include <malloc.h>

// mimalloc's, when sluice-full links it (declared weak: null otherwise).
extern "C" void mi_collect(bool force) __attribute__((weak));

namespace sluice::server {

void ReleaseFreedMemory() {
  if (mi_collect != nullptr) {
    mi_collect(true);
    return;
  }
  (void)malloc_trim(0);
}

}  // namespace sluice::server
