// JobRunner: the process side of an agent — spawns each job as a process in its own session
// (so its process group is the job), under its user's identity and in its own cgroup, reaps
// it, kills all of it (SIGTERM, then SIGKILL after a grace), enforces run limits and reports
// how it ended with its CPU time and memory peak. It knows nothing of the protocol.
//
// Representation: one Entry per live job, keyed by job id (ordered, so listings are stable).
// A job is spawned with fork + exec; everything the child needs (argv, envp, paths with `%j`
// replaced, the account's uid, gid and groups, the cgroup files) is prepared before fork,
// because the child of a multithreaded process may only call async-signal-safe functions. In
// the child, in this order: setsid; join the job's cgroup by writing `0` into its
// cgroup.procs files (still as root; done by the child rather than by the parent because it
// needs no extra round trip, its failure travels the same error pipe, and nothing of the job
// has run yet); rlimits (without cgroups); setgroups, setgid, setuid (each checked); the
// parent-death signal (after setuid, which clears it); then, AS THE USER, chdir, open the
// output and error files, exec. A close-on-exec pipe carries a failed step and its errno from
// the child to the parent, so Start reports a failed launch synchronously with a message
// instead of a mysterious exit code 127; the parent waits for it at most `launch_timeout`.
// The output and error are opened non-blocking (a FIFO without a reader fails at once instead
// of blocking) and must be regular files or /dev/null (issue 48: a FIFO as output hung the
// agent and lost its host), created with the submitter's umask (077 when not given).
// Adopted jobs (issue 43): a restarted agent takes over the jobs of its previous run whose
// shepherds are alive (Adopt); Release leaves running jobs to the next agent.
// When a job's leader exits, the rest of its group and of its cgroup is killed before the
// leader is reaped (waitid with WNOWAIT keeps the pid, hence the group id, from being reused
// meanwhile); with a cgroup the exit is reported once the cgroup is empty (or after
// `drain_timeout`), so nothing of a finished job keeps running, not even a `setsid` child.
// The leader gets PR_SET_PDEATHSIG(SIGKILL): if the agent dies, its jobs do not run on
// unsupervised (and a restarted agent removes the stale cgroups, killing what is left).
// With `exit_record_dir` (an agent with a state directory) the agent's child is the job's
// shepherd (job_shepherd.h), which leads the job's session and cgroup, forks the job, records
// how it ended before it exits the same way, and kills the job if the agent dies: the leader
// this class waits for is then the shepherd, and what it reports is unchanged.
//
// Identity (R-SEC-1): an agent running as root runs a job as `JobSpec::account`; it refuses
// an account of uid 0 unless `allow_root`. An agent running as another account runs only that
// account's jobs. An unknown account is a failed launch naming account and host.
// Without cgroups (mode none, or auto where there are none) a job is a process group with an
// RLIMIT_DATA memory limit; `warning()` then holds the one line the agent logs.
//
// Time is passed in (`now`), never read, so tests can drive the deadlines.
// Thread-safety: not thread-safe; the agent serializes calls with its own mutex.
// Implements the process part of R-SRV-3, the job environment of R-SRV-5b, R-SEC-1 (identity),
// R-SEC-3 (containment) and R-SEC-4 (accounting), with cgroup.h.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/account.h"
#include "agent/cgroup.h"
#include "agent/cpu_binding.h"
#include "agent/job_exit.h"
#include "base/status.h"
#include "wire/gpu_indexes.h"

namespace sluice::agent {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

struct JobSpec {
  int64_t job = 0;
  uint64_t run = 0;  // the launch's run number (wire::Launch::run), given back in its JobExit
  // Either a shell command (run as `/bin/sh -c command`) or an argv (argv[0] looked up in
  // PATH). Exactly one is set.
  std::string command;
  std::vector<std::string> argv;
  std::string cwd;     // empty: the agent's working directory
  std::string output;  // stdout file, `%j` replaced by the job id; empty: /dev/null
  std::string error;   // stderr file; empty: the same file as stdout
  std::optional<std::chrono::milliseconds> run_limit;
  // The job's whole environment (its submitter's and the job's variables, issue 47): nothing
  // of the agent's own environment reaches a job. PATH defaults to /usr/local/bin:/usr/bin:/bin.
  std::map<std::string, std::string> env;
  // The UNIX account the job runs as (R-SEC-1); its HOME, USER, LOGNAME and SHELL override
  // `env`. Empty: the agent's own identity, unchanged (for tests of the runner alone; the
  // agent refuses a launch that names no account).
  std::string account;
  // Memory limit on this host: rusage mem (MB per task) x the job's tasks here.
  std::optional<int64_t> mem_limit_mb;
  std::optional<int> cpu_limit;  // CPUs: the job's slots on this host
  // The umask the job's files are created with (its output and error first); nullopt: 077.
  std::optional<int> umask;
  // `output` is the server's default: when it cannot be created the output is discarded (and
  // the launch goes on) instead of failing the launch.
  bool output_default = false;
  // Its GPUs on this host, and every GPU's device node (R-GPU-3): the job gets their
  // variables (gpu_env.h), and its cgroup refuses the other GPUs' nodes.
  wire::GpuBinding gpus;
};

struct JobRunnerOptions {
  std::string host;                   // names this host in messages; empty: gethostname()
  bool allow_root = false;            // run jobs whose account has uid 0 (`auth.allow_root_jobs`)
  CgroupOptions cgroup;               // the cgroup layout and the agent's sub-tree (see cgroup.h)
  std::optional<int64_t> pids_limit;  // per job, with cgroups (`sluice agent` flag)
  // How long after the leader's exit the runner waits for the rest of the job's cgroup to
  // die before it reports the exit anyway (a process stuck in the kernel) and retries the
  // removal of the cgroup later.
  std::chrono::milliseconds drain_timeout{10000};
  // Where each job's shepherd records how the job ended (job_shepherd.h), so that an exit
  // survives the agent's death; the agent's state directory + "/exits". Empty: no shepherd,
  // the agent's child is the job itself.
  std::string exit_record_dir;
  // The agent's lease file (job_shepherd.h): a shepherd whose agent died keeps its job until
  // the deadline it holds. Empty: a shepherd kills its job as soon as the agent dies.
  std::string lease_file;
  // How long a launch may take from fork to exec (identity, cgroup, files) before the agent
  // kills it and reports a failed launch: a job's file on a hung file system must not hold
  // the agent (issue 48).
  std::chrono::milliseconds launch_timeout{10000};
  // `sluice agent --bind-cpus` (issue 41): each job's cgroup allows one whole core per slot
  // it has here (cpu_binding.h), those next to its GPUs first; Setup fails when the cgroups
  // cannot bind CPUs (no cpuset controller) or the CPUs cannot be read from `sys_root`.
  bool bind_cpus = false;
  std::string sys_root = "/sys";
  // The NUMA node of each of the host's GPUs by index, as the agent detected them (-1 or
  // absent: unknown): the cores a bound job with GPUs gets first.
  std::map<int32_t, int32_t> gpu_numa;
};

// A step of a job (R-LAUNCH-1, agent/step_session.h): a shell command run as the job's account
// in the job's containment on this host.
struct StepSpec {
  int64_t job = 0;
  std::string command;  // run as `/bin/sh -c command`
  std::map<std::string, std::string> env;
  std::string account;
  std::string cwd;
  std::optional<int> umask;
  std::optional<int64_t> mem_limit_mb;  // the job's on this host, for its steps' own cgroup
  std::optional<int> cpu_limit;
  wire::GpuBinding gpus;  // the job's GPUs on this host
};
// The step's stdin, stdout and stderr; `tty`: fds[0] is a terminal's slave side, which becomes
// the step's controlling terminal.
struct StepStdio {
  int fds[3] = {-1, -1, -1};
  bool tty = false;
};

// A job of an earlier agent process whose shepherd still runs it (issue 43, job_shepherd.h).
struct AdoptedJob {
  int64_t job = 0;
  uint64_t run = 0;
  pid_t shepherd = 0;  // the job's leader (its process group)
  uint64_t start = 0;  // the shepherd's start time (/proc/PID/stat field 22)
  TimePoint now;       // counted as the job's start here
  std::optional<TimePoint> limit_at;  // its run limit, as the earlier agent set it
};

// Replaces every `%j` in `pattern` with the job id (`%%` stays `%%`).
std::string ExpandJobPattern(std::string_view pattern, int64_t job);

// A failed launch the host caused, not the job (JobRunner::Start): the controller closes a host
// after several in a row (issue 47.3) and requeues the job without counting the attempt.
bool IsHostFault(const Status& launch);

class JobRunner {
 public:
  JobRunner() : JobRunner(JobRunnerOptions{}) {}
  explicit JobRunner(JobRunnerOptions options);
  ~JobRunner();  // kills (SIGKILL) and reaps whatever still runs; removes its cgroups
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Sets up containment once, before the first Start: detects the cgroup layout, creates the
  // agent's sub-tree and removes stale job cgroups (killing what runs in them). Errors: the
  // explicitly requested v2/v1 is missing (kFailedPrecondition) or unusable, e.g. not root
  // (kInternal). In auto mode a missing or unusable layout falls back to process groups and
  // sets `warning()`. A runner that is never set up runs jobs without cgroups.
  Status Setup();
  // The layout in effect: kV2, kV1 or kNone.
  CgroupMode containment() const;
  // The agent's cgroup directories, one per hierarchy (empty without cgroups), for its log.
  std::vector<std::string> CgroupDirs() const;
  // One line for the agent's log when jobs are not contained by cgroups; empty otherwise.
  const std::string& warning() const { return warning_; }

  // Starts the job. Any error means the job did not run (a failed launch). The job's faults:
  // kAlreadyExists if it runs already; kFailedPrecondition "<step>: <path>: <errno text>" if
  // switching identity, chdir, opening an output file (or one that is not a regular file) or
  // exec failed; kNotFound "unknown account `x` on host h"; kPermissionDenied for an account
  // of uid 0 (without allow_root) or, for an agent not running as root, an account other than
  // its own. The host's (IsHostFault): kInternal if pipe or fork failed, kUnavailable if the
  // job's cgroup could not be made or joined, setsid or the rlimit failed, or the launch did
  // not reach exec within `launch_timeout`.
  // `stdio` (an interactive job, R-LAUNCH-3): the job's streams instead of /dev/null and its
  // output files.
  Status Start(const JobSpec& spec, TimePoint now, const StepStdio* stdio = nullptr);

  // Takes over a job an earlier agent process started (issue 43): the shepherd is watched
  // through a pidfd (it is not this process's child), its end read from its exit record and
  // reported as any job's (Poll, OnLeaderExit); kills and signals reach it as any job's. May
  // come before Setup, which then keeps the job's cgroup. Errors: kNotFound (the shepherd is
  // gone or its pid now names another process), kAlreadyExists.
  Status Adopt(const AdoptedJob& adopted);
  // Forgets every running job without killing it and keeps its cgroup (an agent stopping for a
  // restart: the next one adopts them). Returns their ids.
  std::vector<int64_t> Release();
  // The job's run-limit deadline, if it has one.
  std::optional<TimePoint> RunLimitAt(int64_t job) const;

  // Sends SIGTERM to the job's group and cgroup, and SIGKILL to both after `grace` (checked by
  // Poll): one TERM, then one KILL. The exit is reported with cause kKilled. Returns true only
  // when this call sent the TERM; false for a job already being killed (a shorter grace still
  // brings the KILL forward), one that does not run or whose leader has already exited.
  bool Kill(int64_t job, std::chrono::milliseconds grace, TimePoint now);
  // Kill for every job; their exits are reported with `cause` (kFenced for a self-fence).
  void KillAll(std::chrono::milliseconds grace, TimePoint now,
               ExitCause cause = ExitCause::kKilled);
  // A user's signal (issue 47): to the job's cgroup where it is contained (its processes and
  // the steps that joined it), else to its process group; to the cgroup of its steps here
  // when it runs elsewhere. The job is not marked killed: if the signal ends it, that is its
  // exit. `run` (nonzero): only that run (a late order must not reach a later run). Returns
  // false when nothing of the job (of that run) runs here under a cgroup or as a leader.
  bool Signal(int64_t job, uint64_t run, int signal);
  // Whether a signal to the job's cgroup reaches its steps here (Signal has sent it to them):
  // otherwise each step is signalled in its own session (StepSessions::Signal).
  bool StepsContained(int64_t job) const;
  // A new run limit for a running job, counted from its start (nullopt: none). A limit already
  // passed ends it at the next Poll. No-op (false) for a job that does not run.
  bool SetRunLimit(int64_t job, std::optional<std::chrono::milliseconds> run_limit);

  // Reaps exited jobs (never waits for a process; a cgroup freeze may take up to ~100 ms),
  // escalates overdue kills to SIGKILL and starts the kill of jobs past their run limit
  // (`run_limit_grace` between SIGTERM and SIGKILL).
  // A job has ended when its leader has exited and (with a cgroup) no process of it is left.
  // Returns the jobs that ended since the last call, in job id order.
  std::vector<JobExit> Poll(TimePoint now, std::chrono::milliseconds run_limit_grace);

  // Called by Poll the moment it sees a job's leader has exited, before it kills the rest of
  // the job and reaps it, with what is known then (status and cause; no accounting): a caller
  // that must not lose the exit (the agent's journal) records it at once. Poll still returns
  // the job's complete exit once all of it has ended.
  void OnLeaderExit(std::function<void(const JobExit&)> callback) {
    on_leader_exit_ = std::move(callback);
  }

  // Starts a step of `spec.job` (R-LAUNCH-1): in its own session, as the job's account, with
  // `stdio` as its streams; in the job's cgroup when the job runs here, else in a cgroup of
  // the job's steps on this host (made at its first step with the step's limits). Returns the
  // step's pid once it exec'd; the caller reaps it (waitpid on that pid). Errors as Start's.
  Result<pid_t> StartStep(const StepSpec& spec, const StepStdio& stdio);
  // Kills every process of the job's steps' own cgroup here and removes it (the job ended;
  // the agent fences). No-op where the job's steps joined the job's cgroup.
  void EndSteps(int64_t job);

  std::vector<int64_t> Running() const;
  // The pid of the job's leader (its process group id), or 0 if the job does not run.
  pid_t Leader(int64_t job) const;
  bool IsRunning(int64_t job) const { return entries_.contains(job); }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    pid_t pid = -1;          // leader; its pid is the group id
    uint64_t run = 0;        // JobSpec::run
    bool contained = false;  // has a cgroup
    TimePoint started;
    std::optional<TimePoint> limit_at;
    std::optional<TimePoint> sigkill_at;  // set once SIGTERM was sent
    bool sigkill_sent = false;            // the one SIGKILL after the grace went out
    std::optional<ExitCause> kill_cause;
    // Set once the leader was reaped, while the rest of its cgroup dies (until drain_until).
    std::optional<JobExit> ended;
    TimePoint drain_until;
    int pidfd = -1;  // an adopted job's shepherd, which is not this process's child
  };
  // Checks and resolves the job's account (before fork); leaves `account` empty for a job
  // without one (no identity switch).
  Status ResolveIdentity(const JobSpec& spec, std::optional<Account>& account) const;
  void SignalJob(int64_t job, const Entry& entry, int signal);
  // Where the shepherd of `job` records its end (REQUIRES: exit_record_dir set).
  std::string ExitRecordPath(int64_t job) const;
  // Whether the leader `pid` has exited (left a zombie, not reaped); `info` says how.
  static bool LeaderExited(pid_t pid, siginfo_t& info);
  // True when it sent the TERM (false: already terminating).
  bool Terminate(int64_t job, Entry& entry, ExitCause cause, std::chrono::milliseconds grace,
                 TimePoint now);
  // Reaps the exited leader of `entry` (after killing the rest of the job) into entry.ended.
  void ReapLeader(int64_t job, Entry& entry, TimePoint now);
  // An adopted job's shepherd has exited; ReapAdopted makes entry.ended of its record.
  static bool AdoptedEnded(const Entry& entry);
  void ReapAdopted(int64_t job, Entry& entry, TimePoint now);
  // Completes entry.ended with the cgroup's accounting and removes the cgroup.
  JobExit Finish(int64_t job, Entry& entry);
  void RetryLeftovers();
  // Setup's last step: the CPU binder, with options_.bind_cpus.
  Status SetupCpuBinding();
  CpuBinder* Binder() { return binder_ ? &*binder_ : nullptr; }

  JobRunnerOptions options_;
  std::string host_;
  std::string warning_;
  std::unique_ptr<Cgroups> cgroups_;  // null: no containment beyond process groups
  std::optional<CpuBinder> binder_;   // with options_.bind_cpus
  std::map<int64_t, Entry> entries_;
  std::vector<int64_t> leftovers_;  // job cgroups whose removal failed; retried by Poll
  std::set<int64_t> step_groups_;   // jobs whose steps have a cgroup of their own here
  std::function<void(const JobExit&)> on_leader_exit_;
  std::vector<pid_t> abandoned_;  // launches killed at their deadline, not reaped yet
};

}  // namespace sluice::agent
