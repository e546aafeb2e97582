#include "server/memory_release.h"

#include <malloc.h>

// mimalloc's, when sluice-full links it (declared weak: null otherwise).
extern "C" void mi_collect(bool force) __attribute__((weak));
extern "C" void mi_thread_done() __attribute__((weak));
extern "C" void mi_thread_init() __attribute__((weak));

namespace sluice::server {
namespace {

thread_local bool release_owed = false;

}  // namespace

void ReleaseFreedMemory() {
  release_owed = false;
  if (mi_collect != nullptr && mi_thread_done != nullptr && mi_thread_init != nullptr) {
    mi_thread_done();  // abandons this thread's segments, their expired decommits done
    mi_thread_init();
    mi_collect(true);  // decommits every abandoned segment's free pages
    return;
  }
  (void)malloc_trim(0);
}

void OweRelease() { release_owed = true; }

bool ReleaseOwed() {
  const bool owed = release_owed;
  release_owed = false;
  return owed;
}

}  // namespace sluice::server
