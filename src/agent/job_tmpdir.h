// JobTmpDirs: a private temporary directory for each job on this host (`sluice agent
// --job-tmpdir BASE`, as LSF's job-specific TMPDIR and Slurm's per-job /tmp): BASE/JOB.tmpdir,
// owned by the job's account with mode 700, named by TMPDIR in the environment of the job and
// of its steps here. It is removed when the job ends here; on a host where only steps of the
// job run, when the last of them ends (a later step starts with an empty one).
// Why: programs of one job that meet on a machine through a shared /tmp trip over each other
// (Open MPI's daemons wipe their job's session directory in /tmp as they start, so two
// "hosts" of one machine, or two jobs that draw the same session name, collide), and what a
// job leaves in /tmp goes with it instead of filling the disk.
// A directory is removed by a child process running as the directory's owner: the job's
// processes may still be dying, and a link swapped in under a remover running as root would
// aim it at any file. Thread-safety: none; the agent calls it under its mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "base/status.h"

namespace sluice::agent {

class JobTmpDirs {
 public:
  explicit JobTmpDirs(std::string base);  // empty: off (jobs keep the TMPDIR they were given)
  ~JobTmpDirs();                          // waits for the removals under way
  JobTmpDirs(const JobTmpDirs&) = delete;
  JobTmpDirs& operator=(const JobTmpDirs&) = delete;

  bool enabled() const { return !base_.empty(); }
  std::string PathOf(int64_t job) const;

  // Creates BASE (mode 711) when missing; it must be a directory, not a link.
  Status EnsureBase() const;
  // The job's directory, created for `account` when missing (chowned to it when the agent
  // is root). Errors: it exists and is not a directory owned by the account (a link, another
  // user's), or cannot be made.
  Result<std::string> Prepare(int64_t job, const std::string& account) const;
  // Starts removing the job's directory and everything in it (as the directory's owner, not
  // following links nor crossing into other file systems). Nothing when there is none.
  void Remove(int64_t job);
  // At start: removes the directories of the jobs for which `running` says false (left by a
  // previous run of the agent whose jobs have ended since).
  void RemoveStale(const std::function<bool(int64_t)>& running);
  // Reaps the removers that have finished; with `wait`, waits for all of them.
  void Reap(bool wait = false);

 private:
  std::string base_;
  std::vector<std::pair<pid_t, std::string>> removers_;  // emptying, and what to rmdir after
};

}  // namespace sluice::agent
