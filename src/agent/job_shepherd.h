// The job shepherd (issue 19, "a completed job never runs again"): a tiny process between the
// agent and each job, like Slurm's slurmstepd, that records how the job ended in the agent's
// state directory before anyone else can see the end, so the end survives the agent's death.
//
// Why: the agent journals a job's exit the moment it sees the job's leader exit. An agent
// SIGKILLed between the leader's exit and that journal entry lost the exit (the zombie was
// reaped by init), the restarted agent found the job launched and not ended, reported it gone,
// and the controller ran the job again although it had completed (6 of 2,000 jobs in the full
// soak). The shepherd closes that window: the exit is on disk before the shepherd itself
// exits, and the agent can only see the job end through the shepherd's exit.
//
// Process tree: the agent forks the shepherd; the shepherd starts the job's session (its pid
// is the job's process group, so the agent kills and waits for it as it did for the job's
// leader), joins the job's cgroup, blocks every signal it can, and forks the job (which
// restores the signals, drops to the job's account and execs). Then the shepherd only waits:
//   1. the job ended: it writes the record (below) to `<dir>/<job>`, fdatasync'd, and exits
//      the way the job did (the same exit code, or the same signal, without a core), so the
//      agent's view of the job is unchanged;
//   2. the agent died (the parent-death signal, or getppid() changed): it SIGKILLs the job, as
//      the job's own parent-death signal did before (jobs do not run on unsupervised), waits
//      for it and records it, with "agent died" when it was its own kill that ended it.
// A job that had exited before the agent died is therefore recorded as it ended.
// The shepherd never execs, so all it runs is async-signal-safe and allocates nothing: it is
// forked from a multi-threaded agent whose allocator (mimalloc) has no fork handlers.
//
// Record: one line, "<e|s> <code or signal> <agent died 0|1> <cpu usec> <max rss KiB>\n" (the
// job's own rusage: the shepherd's would hold the agent's memory it was forked from).
//
// The agent removes a record once it has journaled the exit itself; a restarted agent reads
// every record left (ReadExitRecords) after its previous run's shepherds are gone
// (WaitForShepherds): a job recorded as ended by itself is reported as ended, a job the
// shepherd killed because the agent died is gone (the controller requeues it).
//
// Thread-safety: RunShepherd runs in a forked child (async-signal-safe calls only); the others
// are plain functions of the file system and /proc.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "agent/journal.h"

namespace sluice::agent {

// The directory of the records in an agent's state directory.
inline std::string ExitRecordDir(const std::string& state_dir) { return state_dir + "/exits"; }

struct ExitRecord {
  std::optional<int> exit_code;  // the job exited with it
  std::optional<int> signal;     // the job was killed by it
  bool agent_died = false;       // the shepherd killed the job because the agent had died
  double cpu_seconds = 0;
  double max_rss_mb = 0;
};

// The job's side after the fork: restores signals, enters the job's context and execs; never
// returns. `arg` is passed through.
using JobMain = void (*)(const void* arg, int error_pipe, pid_t shepherd);

// Runs in the child the agent forked, after setsid and after joining the job's cgroup:
// async-signal-safe calls only, no allocation. Forks the job (which calls `job_main`), closes
// `error_pipe` in the shepherd (the job keeps it until exec), waits, records into
// `record_path` and exits as the job did. `agent` is the agent's pid. Never returns.
[[noreturn]] void RunShepherd(const char* record_path, pid_t agent, int error_pipe,
                              JobMain job_main, const void* arg);

// The record at `path`; nullopt if it is missing or unreadable (a torn write).
std::optional<ExitRecord> ReadExitRecord(const std::string& path);

// Every record in `dir` (files named by job id), removing each file it read. A missing
// directory is empty.
std::map<int64_t, ExitRecord> ReadExitRecords(const std::string& dir);

// Waits, at most `timeout`, until no shepherd of `launched` (the process that led the job's
// group, identified by pid and start time) is alive: after the agent's death each one kills
// its job and writes its record, which the restarted agent then reads. Returns how many were
// still alive at the deadline.
int WaitForShepherds(const std::map<int64_t, JournalLaunch>& launched,
                     std::chrono::milliseconds timeout);

}  // namespace sluice::agent
