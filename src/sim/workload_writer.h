// Workload writers: a Workload as Sluice JSONL or as SWF text, e.g. for `sluice gen`.
//
// Implements the write side of R-SIM-4 (JSONL keys) and the SWF output of R-SIM-5.
//
// Both writers are deterministic: the same Workload gives the same bytes. Jobs are written in
// the order of `workload.jobs`.
//
// JSONL: one object per line in this key order: id, submit, user, project, queue, tasks (or
// min_tasks and max_tasks when they differ), resreq, runtime, run_limit, priority, begin,
// depend, exclusive, hold, cancel_at, name, command. Keys holding their default (empty
// string, 0, false, no run_limit, no cancel_at) are left out; id, submit, tasks and runtime
// are always written. ParseJsonl(WriteJsonl(w)) gives back the same jobs.
//
// SWF: a header (`; MaxNodes:` and `; MaxProcs:` = workload.procs, `; UnixStartTime:` when
// not 0) and 18 fields per job: 1 id, 2 submit, 4 runtime, 5 and 8 max_tasks, 9 run_limit
// (-1 when none), 11 status 1, 12 user number; other fields -1. A user `u<N>` is written as
// N; other user names get numbers above the largest such N, in order of first appearance;
// an empty user is -1. SWF has no place for queues, resource requests, min_tasks, cancel
// times and the other JSONL-only keys: they are dropped. ParseSwf(WriteSwf(w)) gives back
// ids, submit times, sizes, runtimes, run limits (> 0) and `u<N>` users.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "sim/workload.h"

namespace sluice::sim {

std::string WriteJsonl(const Workload& workload);

std::string WriteSwf(const Workload& workload);

}  // namespace sluice::sim
