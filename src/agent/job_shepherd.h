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
//   2. the agent died (the parent-death signal, or getppid() changed): the job goes on (issue
//      43: an agent is restarted or upgraded without killing its jobs, as slurmd is) for as
//      long as the agent's lease file (below) allows; once that deadline has passed the
//      shepherd SIGKILLs the job, waits for it and records it, with "agent died" when it was
//      its own kill that ended it. Without a lease file (JobRunner tests) it kills at once, as
//      before issue 43.
// A job that had exited before the agent died is therefore recorded as it ended.
// The shepherd never execs, so all it runs is async-signal-safe and allocates nothing: it is
// forked from a multi-threaded agent whose allocator (mimalloc) has no fork handlers.
//
// Lease (issue 43, exactly once): the lease file (lease_file.h) holds the instant until which
// the controller cannot requeue this host's jobs: the agent writes its last successful
// request's send time + the absence the controller allows (agent.h), which is also when a
// live agent cut off from the controller fences itself. The controller requeues only after
// absence + its host-loss grace of silence, counted from when the request ARRIVED, so a
// shepherd that kills at the deadline has killed (by at least that grace) before anything can
// run the job elsewhere. The agent writes the file before it launches anything and whenever
// its deadline moves (never later than the true deadline: a stale value only kills sooner).
// An orphaned shepherd reads it every 100 ms; a missing or unreadable file is an expired
// lease. Adoption needs no message to the shepherd: the next agent of the same state
// directory finds the live shepherds (journal: pid and start time; JobRunner::Adopt opens a
// pidfd), registers them as running, and its own successful requests move the deadline on;
// so one rule ("run while the lease holds") covers a restart, a crash, an agent kept down
// too long, and the adopter's own death, without a race between an adoption marker and the
// deadline. Interactive jobs and steps, whose streams pass through the agent, end with it
// (agent.h).
//
// Record: one line, "<e|s> <code or signal> <agent died 0|1> <cpu usec> <max rss KiB>\n" (the
// job's own rusage: the shepherd's would hold the agent's memory it was forked from).
//
// The agent removes a record once it has journaled the exit itself; a restarted agent reads
// every record left (ReadExitRecords): a job recorded as ended by itself is reported as
// ended, a job the shepherd killed because the lease ran out is gone (the controller requeues
// it); the shepherds still alive within the lease are adopted, and the others waited for
// (WaitForShepherds) since they are about to kill their jobs.
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
#include "agent/lease_file.h"

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

// What a shepherd writes and reads; both are NUL-terminated paths prepared before fork.
struct ShepherdFiles {
  const char* record = nullptr;  // where the job's end is recorded
  const char* lease = nullptr;   // the agent's lease file; null or "": kill when the agent dies
};

// Runs in the child the agent forked, after setsid and after joining the job's cgroup:
// async-signal-safe calls only, no allocation. Forks the job (which calls `job_main`), closes
// `error_pipe` in the shepherd (the job keeps it until exec), waits, records into
// `files.record` and exits as the job did. `agent` is the agent's pid. Never returns.
[[noreturn]] void RunShepherd(const ShepherdFiles& files, pid_t agent, int error_pipe,
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
// Whether the shepherd of `launch` (its pid and start time) is alive and not a zombie.
bool ShepherdAlive(const JournalLaunch& launch);

int WaitForShepherds(const std::map<int64_t, JournalLaunch>& launched,
                     std::chrono::milliseconds timeout);

}  // namespace sluice::agent
