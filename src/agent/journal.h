// AgentJournal: the agent's durable memory across its own crashes (issue 19, "exactly once").
// A small append-only file `journal` in the agent's state directory records, one JSON object
// a line, each fdatasync'd before the call returns:
//   {"instance": ID}                               the agent's instance id (kept across restarts)
//   {"launch": JOB, "epoch": E, "pgid": P, "start": T, "run": R, "limit_at": MS, "attach": B}
//                                                  a job started (its leader's process group
//                                                  and /proc start time, for the sweep and
//                                                  adoption; its run; its run-limit deadline);
//                                                  written again when its run limit changes
//   {"exit": JOB, "report": {...}}                 a job ended (the exit report as sent)
//   {"ack": JOB}                                   the controller committed the exit
//   {"gone": JOB}                                  a launch whose processes were swept at start
// Replaying the lines gives the live set: jobs launched and not yet ended (`launched()`), and
// exits not yet acknowledged (`exits()`), which a restarted agent reports again. A torn last
// line (a crash mid-write) and unparsable lines are skipped and counted.
// Compaction: when the file holds many more lines than the live set, it is rewritten (temp
// file, fsync, rename, fsync of the directory), so it stays small however long the agent runs.
//
// Safety: the state directory is created 0700; Open refuses a directory or journal owned by
// another uid or writable by group or others (a root agent kills the process groups the
// journal names, so nobody else may write it), and takes an exclusive flock so two agents
// never share one journal.
//
// Thread-safety: not thread-safe; the agent serializes calls with its own mutex.
// Implements issue 19's agent journal (exits reported across agent restarts).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "base/status.h"
#include "wire/agent_protocol.h"

namespace sluice::agent {

struct JournalLaunch {
  int64_t job = 0;
  uint64_t epoch = 0;  // the controller epoch the launch came in
  pid_t pgid = 0;      // the job's process group (its leader's pid)
  uint64_t start = 0;  // the leader's start time (/proc/PID/stat field 22), 0 unknown
  // For a restarted agent that adopts the job (issue 43): its run, and its run-limit deadline
  // (steady_clock milliseconds, CLOCK_MONOTONIC; 0 none).
  uint64_t run = 0;
  int64_t limit_at_ms = 0;
  // Its streams passed through the agent that launched it (an interactive job): not adopted.
  bool interactive = false;
};

class AgentJournal {
 public:
  ~AgentJournal();
  AgentJournal(const AgentJournal&) = delete;
  AgentJournal& operator=(const AgentJournal&) = delete;

  // Opens (creating it and the directory) and replays the journal of `dir`.
  // Errors: kFailedPrecondition (unsafe ownership or mode; another agent holds the lock),
  // kInternal (an I/O error), each naming the path.
  static Result<std::unique_ptr<AgentJournal>> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  // The instance id of the agent that wrote the journal first (empty for a new journal).
  const std::string& instance() const { return instance_; }
  const std::map<int64_t, JournalLaunch>& launched() const { return launched_; }
  const std::map<int64_t, wire::ExitReport>& exits() const { return exits_; }
  // Lines skipped as torn or unparsable while replaying.
  int skipped() const { return skipped_; }

  // Each appends one durable line and updates the live set. Errors: kInternal (write or sync
  // failed, e.g. a full disk), naming the journal; the live set is updated anyway.
  Status SetInstance(const std::string& id);
  Status RecordLaunch(const JournalLaunch& launch);
  Status RecordExit(const wire::ExitReport& report);
  Status RecordAck(int64_t job);
  Status RecordGone(int64_t job);

  // Group commit: between Defer and Sync, the Record calls append without syncing (errors are
  // kept for Sync); Sync makes them durable with one fdatasync. Without Defer each Record call
  // syncs.
  void Defer() { deferred_ = true; }
  Status Sync();

 private:
  AgentJournal(std::string dir, int fd, int lock_fd);
  Status Replay();
  Status Append(const std::string& line);
  Status Compact();
  void ApplyLine(const std::string& line);

  std::string dir_;
  int fd_ = -1;       // the journal, O_APPEND
  int lock_fd_ = -1;  // the `lock` file, flock'ed for the journal's lifetime
  std::string instance_;
  std::map<int64_t, JournalLaunch> launched_;
  std::map<int64_t, wire::ExitReport> exits_;
  int skipped_ = 0;
  int64_t lines_ = 0;  // lines in the file now
  bool deferred_ = false;
  bool unsynced_ = false;
  Status deferred_error_;
};

// /proc/PID/stat's start time (clock ticks since boot), 0 if the process is gone.
uint64_t ProcessStartTime(pid_t pid);

}  // namespace sluice::agent
