// ReleaseFreedMemory: hands the calling thread's freed pages back to the system after a burst
// of short-lived allocations (a batch submission's parsed bodies, a restart's rows, a large
// cycle's decisions), so that the server's resident memory at rest is what it holds, not its
// peak (issue 45: at 1,000,000 pending jobs 60-110 MB of freed pages stayed resident on the
// threads that had gone idle: the HTTP worker of the last batch, the scheduling thread, the
// estimator).
//
// Which allocator: sluice-full links mimalloc when it is installed (CMakeLists.txt); its
// functions are then found (weak references: the server library does not link it).
// mimalloc 2.0 decommits a thread's freed pages only after a delay, and then only when that
// same thread takes a new page from the same segment, which an idle thread never does; so the
// thread's heap is abandoned (as at its exit) and a forced collect decommits what the
// abandoned segments hold free. The thread starts a fresh heap and takes segments back as it
// needs them. Otherwise glibc's malloc_trim(0) returns the free top and whole free pages of
// every arena.
// Costs a few milliseconds at most, and some page faults when the thread works again: call it
// once a burst is over, holding no lock, and not on the main thread: mimalloc cannot abandon
// the main heap, and a forced collect there takes every abandoned segment into it (the restart
// runs on a thread of its own for this, Controller::Create).
//
// OweRelease / ReleaseOwed: a thread that works in bursts notes one (OweRelease) and releases
// when it finds itself idle (ReleaseOwed tells whether one is owed and forgets it), so that
// busy periods pay nothing and the release happens once, after the last of them.
// Thread-safety: any thread; the owed flag is the calling thread's.
#pragma once

namespace sluice::server {

void ReleaseFreedMemory();

void OweRelease();
bool ReleaseOwed();

}  // namespace sluice::server
