// ReleaseFreedMemory: hands the heap's freed pages back to the system after a burst of
// short-lived allocations (a batch submission's parsed bodies, a restart's rows), so that the
// server's resident memory at rest is what it holds, not its peak (issue 45: at 200,000
// pending jobs about 165 MB, 0.8 KB a job, stayed resident after the submissions).
//
// Which allocator: sluice-full links mimalloc when it is installed (CMakeLists.txt); its
// mi_collect is then found (a weak reference: the server library does not link it) and
// collects the calling thread's heap and the pages abandoned by other threads. Otherwise
// glibc's malloc_trim(0) returns the free top and whole free pages of every arena.
// Costs a few milliseconds at most; call it after the burst, holding no lock.
// Thread-safety: any thread.
#pragma once

namespace sluice::server {

void ReleaseFreedMemory();

}  // namespace sluice::server
