#include "agent/job_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "agent/gpu_env.h"
#include "agent/journal.h"
#include "agent/job_shepherd.h"
#include "agent/process_image.h"

namespace sluice::agent {
namespace {

// What the child reports through the error pipe when a step before exec fails.
enum ChildStep : int {
  kStepChdir = 1,
  kStepStdout,
  kStepStderr,
  kStepExec,
  kStepSession,
  kStepCgroup,
  kStepRlimit,
  kStepGroups,
  kStepGid,
  kStepUid,
  kStepStdoutKind,  // the output is not a regular file (nor /dev/null)
  kStepStderrKind,
};
struct ChildFailure {
  int step = 0;
  int error = 0;
  int index = 0;  // kStepCgroup: which cgroup.procs file
};

// Everything the child touches, prepared before fork. Nothing may allocate between fork and
// exec: the agent is multi-threaded, and sluice-full's allocator (mimalloc) has no fork
// handlers, so a lock another thread held at fork stays held in the child forever.
struct Prepared {
  std::string program;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::string cwd;
  std::string output;
  std::string error;
  std::vector<char*> argv_ptrs;
  std::vector<char*> env_ptrs;
  std::vector<std::string> cgroup_procs;  // files to write `0` into (join the job's cgroup)
  std::optional<rlim_t> data_limit;       // RLIMIT_DATA, without cgroups
  std::optional<Account> account;         // switch to it (the agent runs as root)
  std::string exit_record;                // the shepherd's record file; empty: no shepherd
  std::string lease_file;                 // the agent's lease file (job_shepherd.h)
  std::string shepherd_title;             // its argv, instead of the agent's (process_image.h)
  mode_t umask = 077;
  bool output_default = false;  // fall back to /dev/null when the output cannot be created
  // A step (R-LAUNCH-1): its stdin, stdout and stderr are these descriptors (pipes or a
  // terminal) instead of /dev/null and the output files; `tty`: stdin is a terminal that
  // becomes the step's controlling terminal.
  int stdio[3] = {-1, -1, -1};
  bool tty = false;
};

// env_ptrs: execve's view of env, rebuilt whenever env changes.
void PointAtEnv(Prepared& p) {
  p.env_ptrs.clear();
  for (std::string& entry : p.env) p.env_ptrs.push_back(entry.data());
  p.env_ptrs.push_back(nullptr);
}

// Resolves argv[0] against PATH the way execvp would, in the parent (execvp may allocate).
std::string ResolveProgram(const std::string& name, const std::map<std::string, std::string>& env) {
  if (name.find('/') != std::string::npos) return name;
  auto path = env.find("PATH");
  std::string_view dirs = path != env.end() ? path->second : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return name;  // exec fails with ENOENT, reported as a failed launch
}

// `gpus_fenced`: the job's cgroup refuses the host's other GPUs (its runtime numbers its own
// from 0).
Prepared Prepare(const JobSpec& spec, const std::optional<Account>& account,
                 bool gpus_fenced = false) {
  Prepared p;
  std::map<std::string, std::string> env = spec.env;  // never the agent's own (issue 47)
  env.try_emplace("PATH", "/usr/local/bin:/usr/bin:/bin");
  AddGpuEnvironment(spec.gpus, gpus_fenced, env);
  if (account) {
    env["HOME"] = account->home;
    env["USER"] = account->name;
    env["LOGNAME"] = account->name;
    env["SHELL"] = account->shell;
    if (geteuid() == 0) p.account = account;  // root switches; else it is already the account
  }
  if (spec.argv.empty()) {
    p.program = "/bin/sh";
    p.args = {"sh", "-c", spec.command};
  } else {
    p.program = ResolveProgram(spec.argv[0], env);
    p.args = spec.argv;
  }
  for (const auto& [key, value] : env) p.env.push_back(key + "=" + value);
  p.cwd = spec.cwd;
  p.output = spec.output.empty() ? "/dev/null" : ExpandJobPattern(spec.output, spec.job);
  p.error = spec.error.empty() ? "" : ExpandJobPattern(spec.error, spec.job);
  p.umask = static_cast<mode_t>(spec.umask.value_or(077)) & 0777;
  p.output_default = spec.output_default;
  for (std::string& arg : p.args) p.argv_ptrs.push_back(arg.data());
  p.argv_ptrs.push_back(nullptr);
  PointAtEnv(p);
  return p;
}

[[noreturn]] void ChildFail(int pipe_fd, int step, int index = 0) {
  ChildFailure failure{.step = step, .error = errno, .index = index};
  ssize_t ignored = write(pipe_fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

// Joins the job's cgroup (as root). Runs in the child: async-signal-safe calls only.
void JoinCgroup(const Prepared& p, int pipe_fd) {
  for (size_t i = 0; i < p.cgroup_procs.size(); ++i) {
    // O_CREAT only matters for a fake tree (tests); cgroupfs has the file.
    const int fd = open(p.cgroup_procs[i].c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, "0", 1) != 1) ChildFail(pipe_fd, kStepCgroup, static_cast<int>(i));
    close(fd);
  }
}

// Applies rlimits and drops to the job's account. Runs in the child, as root when it
// switches: async-signal-safe calls only.
void EnterJobContext(const Prepared& p, int pipe_fd) {
  if (p.data_limit) {
    const rlimit limit{.rlim_cur = *p.data_limit, .rlim_max = *p.data_limit};
    if (setrlimit(RLIMIT_DATA, &limit) != 0) ChildFail(pipe_fd, kStepRlimit);
  }
  if (p.account) {
    const Account& a = *p.account;
    if (setgroups(a.groups.size(), a.groups.data()) != 0) ChildFail(pipe_fd, kStepGroups);
    if (setgid(a.gid) != 0) ChildFail(pipe_fd, kStepGid);
    if (setuid(a.uid) != 0) ChildFail(pipe_fd, kStepUid);
    // A dropped identity must not be recoverable.
    if (a.uid != 0 && setuid(0) == 0) {
      errno = EPERM;
      ChildFail(pipe_fd, kStepUid);
    }
  }
}

bool IsDevNull(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3); }

// Opens a job's output or error file as the job's user, without ever blocking (a FIFO with no
// reader fails with ENXIO, one with a reader is refused below), appending, created with the
// umask. Anything but a regular file or /dev/null is refused (step + 1: its kind). Returns -1
// only when `may_fail` (the server's default output) and the file could not be opened.
int OpenOutput(const char* path, int pipe_fd, ChildStep step, bool may_fail) {
  const int fd =
      open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0666);
  if (fd < 0) {
    if (may_fail) return -1;
    ChildFail(pipe_fd, step);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) ChildFail(pipe_fd, step);
  if (!S_ISREG(st.st_mode) && !IsDevNull(st)) {
    errno = S_ISFIFO(st.st_mode) ? ESPIPE : EINVAL;
    ChildFail(pipe_fd, step == kStepStdout ? kStepStdoutKind : kStepStderrKind);
  }
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) ChildFail(pipe_fd, step);
  return fd;
}

// The job's side, in the agent's child or in its shepherd's child (`parent`): signals, account,
// files, exec. Async-signal-safe calls only.
[[noreturn]] void ExecJob(const void* arg, int pipe_fd, pid_t parent) {
  const Prepared& p = *static_cast<const Prepared*>(arg);
  // Ignored signals stay ignored across exec; the job gets the defaults.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2}) {
    sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (!p.exit_record.empty()) {  // the shepherd's OOM score is not the job's
    const int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (oom >= 0) {
      const ssize_t ignored = write(oom, "0", 1);
      (void)ignored;
      close(oom);
    }
  }
  EnterJobContext(p, pipe_fd);
  // After setuid, which clears the parent-death signal.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
  if (p.stdio[0] >= 0) {                // a step: its streams are the agent's pipes or terminal
    if (p.tty) {
      setsid();  // under a shepherd the job leads no session yet (fails harmlessly otherwise)
      ioctl(p.exit_record.empty() ? p.stdio[0] : STDIN_FILENO, TIOCSCTTY, 0);
    }
    // Under a shepherd (which closes every other descriptor) they are already 0, 1 and 2.
    if (p.exit_record.empty()) {
      for (int fd = 0; fd < 3; ++fd) dup2(p.stdio[fd], fd);
    }
    if (!p.cwd.empty() && chdir(p.cwd.c_str()) != 0) ChildFail(pipe_fd, kStepChdir);
    umask(p.umask);
    execve(p.program.c_str(), p.argv_ptrs.data(), p.env_ptrs.data());
    ChildFail(pipe_fd, kStepExec);
  }
  const int null_in = open("/dev/null", O_RDONLY);
  if (null_in >= 0) dup2(null_in, STDIN_FILENO);
  if (!p.cwd.empty() && chdir(p.cwd.c_str()) != 0) ChildFail(pipe_fd, kStepChdir);
  umask(p.umask);
  int out = OpenOutput(p.output.c_str(), pipe_fd, kStepStdout, p.output_default);
  if (out < 0) out = OpenOutput("/dev/null", pipe_fd, kStepStdout, false);  // the default failed
  int err = out;
  if (!p.error.empty() && p.error != p.output) {
    err = OpenOutput(p.error.c_str(), pipe_fd, kStepStderr, false);
  }
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  execve(p.program.c_str(), p.argv_ptrs.data(), p.env_ptrs.data());
  ChildFail(pipe_fd, kStepExec);
}

// Runs in the child: async-signal-safe calls only. With an exit record the child becomes the
// job's shepherd (job_shepherd.h) and the job its child; otherwise the child execs the job.
[[noreturn]] void ChildMain(const Prepared& p, int pipe_fd, pid_t parent) {
  if (setsid() < 0) ChildFail(pipe_fd, kStepSession);
  // No descriptor of the agent (sockets, the store) leaks into the job.
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 4096; ++fd) {
      if (fd != pipe_fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
  JoinCgroup(p, pipe_fd);
  if (!p.exit_record.empty()) SetProcessTitle(p.shepherd_title.c_str());
  if (!p.exit_record.empty()) {
    // An interactive job's streams survive the shepherd's closing of descriptors as its 0-2.
    if (p.stdio[0] >= 0) {
      for (int fd = 0; fd < 3; ++fd) dup2(p.stdio[fd], fd);
    }
    RunShepherd({.record = p.exit_record.c_str(), .lease = p.lease_file.c_str()}, parent, pipe_fd,
                ExecJob, &p);
  }
  ExecJob(&p, pipe_fd, parent);
}

std::string DescribeFailure(const ChildFailure& failure, const Prepared& p) {
  std::string what;
  switch (failure.step) {
    case kStepChdir:
      what = "chdir: " + p.cwd;
      break;
    case kStepStdout:
      what = "open output: " + p.output;
      break;
    case kStepStderr:
      what = "open error: " + p.error;
      break;
    case kStepStdoutKind:
    case kStepStderrKind:
      // The errno says which kind (ESPIPE: a FIFO); the text says what is allowed.
      return std::string(failure.step == kStepStdoutKind ? "output " + p.output
                                                         : "error " + p.error) +
             ": " + (failure.error == ESPIPE ? "a FIFO" : "not a regular file") +
             "; a job's output and error must be regular files (or /dev/null)";
    case kStepExec:
      what = "exec: " + p.program;
      break;
    case kStepCgroup:
      what = "join cgroup: " + p.cgroup_procs.at(failure.index);
      break;
    case kStepRlimit:
      what = "setrlimit: RLIMIT_DATA";
      break;
    case kStepGroups:
      what = "setgroups: " + p.account->name;
      break;
    case kStepGid:
      what = "setgid: " + p.account->name;
      break;
    case kStepUid:
      what = "setuid: " + p.account->name;
      break;
    default:
      what = "setsid";
      break;
  }
  return what + ": " + std::strerror(failure.error);
}

}  // namespace

bool IsHostFault(const Status& launch) {
  return launch.code() == StatusCode::kUnavailable || launch.code() == StatusCode::kInternal;
}

std::string ExpandJobPattern(std::string_view pattern, int64_t job) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'j') {
        out += std::to_string(job);
        ++i;
        continue;
      }
      if (pattern[i + 1] == '%') {
        out += "%%";
        ++i;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

bool WaitEmpty(const Cgroups& cgroups, int64_t job, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!cgroups.Empty(job)) {
    if (Clock::now() >= deadline) return false;
    usleep(1000);
  }
  return true;
}

// Sets `name` in the environment the child execs with (over a value the job's own had).
void SetVariable(Prepared& p, const std::string& name, const std::string& value) {
  std::erase_if(p.env, [&](const std::string& e) { return e.starts_with(name + "="); });
  p.env.push_back(name + "=" + value);
  PointAtEnv(p);
}

// The job's cgroup (its procs files for the child to join), or without cgroups an rlimit.
// With a `binder`, the cgroup allows only the cores it binds the job to, named to the job in
// SLUICE_CPUS.
Status Contain(Cgroups* cgroups, CpuBinder* binder, const JobSpec& spec,
               std::optional<int64_t> pids, Prepared& p) {
  if (cgroups == nullptr) {
    if (spec.mem_limit_mb) p.data_limit = static_cast<rlim_t>(*spec.mem_limit_mb) << 20;
    return Status::Ok();
  }
  CgroupLimits limits{.memory_mb = spec.mem_limit_mb, .cpus = spec.cpu_limit, .pids = pids};
  if (cgroups->FencesDevices()) {
    Result<std::vector<DeviceRule>> deny = DeniedGpuRules(spec.gpus.gpus, spec.gpus.gpu_paths);
    if (!deny) {
      return Status(StatusCode::kUnavailable,
                    "job " + std::to_string(spec.job) + " GPUs: " + deny.error().message());
    }
    limits.deny = std::move(*deny);
  }
  if (binder != nullptr) {
    const CpuGrant& grant = binder->Bind(spec.job, spec.cpu_limit.value_or(1), spec.gpus.gpus);
    limits.cpuset = grant.cpus;
    limits.mems = grant.mems;
    SetVariable(p, "SLUICE_CPUS", FormatCpuList(grant.cpus));
  }
  Status created = cgroups->Create(spec.job, limits);
  if (!created.ok()) {
    if (binder != nullptr) binder->Release(spec.job);
    return Status(StatusCode::kUnavailable,
                  "job " + std::to_string(spec.job) + " cgroup: " + created.message());
  }
  p.cgroup_procs = cgroups->ProcsFiles(spec.job);
  return Status::Ok();
}

// Reads the child's report from the error pipe: a ChildFailure, or 0 bytes at exec (the pipe
// is close-on-exec). Returns -1 when `timeout` passed first.
ssize_t ReadChildReport(int fd, ChildFailure& failure, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    const int ready = poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return -1;
    const ssize_t got = read(fd, &failure, sizeof failure);
    if (got < 0 && errno == EINTR) continue;
    return got;
  }
}

// Forks the job. Returns its pid once it has exec'd; kFailedPrecondition naming the step when
// the child failed before exec (it has been reaped) or did not reach exec within `timeout`
// (it is killed, and its pid added to `abandoned` when it could not be reaped at once: a
// process stuck in the kernel on a hung file system); kInternal when pipe or fork failed.
Result<pid_t> Spawn(const Prepared& prepared, std::chrono::milliseconds timeout,
                    std::vector<pid_t>& abandoned) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Internal(std::string("fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    ChildMain(prepared, pipe_fds[1], parent);
  }
  close(pipe_fds[1]);
  ChildFailure failure;
  const ssize_t got = ReadChildReport(pipe_fds[0], failure, timeout);
  close(pipe_fds[0]);
  if (got < 0) {
    kill(-pid, SIGKILL);  // its session (setsid), shepherd and job alike
    kill(pid, SIGKILL);
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) != pid) abandoned.push_back(pid);
    return Status(StatusCode::kUnavailable,
                  "the launch did not reach exec within " + std::to_string(timeout.count()) +
                      " ms (a file of the job on a hung file system?); killed");
  }
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int status = 0;
    waitpid(pid, &status, 0);
    const bool host =
        failure.step == kStepSession || failure.step == kStepCgroup || failure.step == kStepRlimit;
    return Status(host ? StatusCode::kUnavailable : StatusCode::kFailedPrecondition,
                  DescribeFailure(failure, prepared));
  }
  return pid;
}

}  // namespace

JobRunner::JobRunner(JobRunnerOptions options)
    : options_(std::move(options)), host_(options_.host.empty() ? HostName() : options_.host) {}

JobRunner::~JobRunner() {
  for (auto& [job, entry] : entries_) {
    if (!entry.ended) {
      SignalJob(job, entry, SIGKILL);
      int status = 0;
      if (entry.pidfd < 0) waitpid(entry.pid, &status, 0);  // an adopted one is init's child
    }
    if (entry.pidfd >= 0) close(entry.pidfd);
  }
  if (cgroups_ == nullptr) return;
  for (auto& [job, entry] : entries_) {
    if (!entry.contained) continue;
    cgroups_->Signal(job, SIGKILL);
    WaitEmpty(*cgroups_, job, std::chrono::milliseconds(2000));
    if (!cgroups_->Remove(job).ok()) leftovers_.push_back(job);
  }
  entries_.clear();
  for (int64_t job : step_groups_) leftovers_.push_back(job);
  step_groups_.clear();
  for (int64_t job : leftovers_) {
    cgroups_->Signal(job, SIGKILL);
    WaitEmpty(*cgroups_, job, std::chrono::milliseconds(500));
    (void)cgroups_->Remove(job);  // best effort: the next agent start removes what is left
  }
  cgroups_->RemoveAgentDirs();
}

Status JobRunner::Setup() {
  if (cgroups_ != nullptr) return Status::Ok();
  CgroupOptions cgroup = options_.cgroup;
  cgroup.cpuset = options_.bind_cpus;
  if (cgroup.mode == CgroupMode::kNone) {
    warning_ =
        "cgroups disabled (--cgroup none): jobs are contained by process group and rlimits "
        "only; a process that leaves its group (setsid) survives a kill";
    return SetupCpuBinding();
  }
  if (cgroup.path.empty()) cgroup.path = "sluice/" + host_;
  for (const auto& [job, entry] : entries_) cgroup.keep.insert(job);  // adopted: not stale
  Result<std::unique_ptr<Cgroups>> opened = OpenCgroups(cgroup);
  if (!opened) {
    if (cgroup.mode != CgroupMode::kAuto) return opened.error();
    warning_ = "cgroups unavailable (" + opened.error().message() +
               "): jobs are contained by process group and rlimits only";
    return SetupCpuBinding();
  }
  cgroups_ = std::move(*opened);
  for (auto& [job, entry] : entries_) {
    entry.contained = cgroups_ != nullptr && !cgroups_->Empty(job);
  }
  if (cgroups_ == nullptr) {
    warning_ = "no cgroup v2 or v1 under " + cgroup.fs_root +
               ": jobs are contained by process group and rlimits only";
  }
  return SetupCpuBinding();
}

Status JobRunner::SetupCpuBinding() {
  if (!options_.bind_cpus) return Status::Ok();
  if (cgroups_ == nullptr || !cgroups_->BindsCpus()) {
    return FailedPrecondition(
        "--bind-cpus needs the cpuset cgroup controller (a v1 cpuset hierarchy, or cpuset in "
        "the v2 tree's cgroup.controllers)");
  }
  Result<std::vector<LogicalCpu>> cpus = ReadUsableCpus(options_.sys_root);
  if (!cpus) return cpus.error().WithPrefix("--bind-cpus");
  binder_.emplace(std::move(*cpus), options_.gpu_numa, ReadAllowedMems());
  return Status::Ok();
}

CgroupMode JobRunner::containment() const {
  return cgroups_ != nullptr ? cgroups_->mode() : CgroupMode::kNone;
}

std::vector<std::string> JobRunner::CgroupDirs() const {
  return cgroups_ != nullptr ? cgroups_->AgentDirs() : std::vector<std::string>{};
}

Status JobRunner::ResolveIdentity(const JobSpec& spec, std::optional<Account>& account) const {
  if (spec.account.empty()) return Status::Ok();
  Result<Account> found = LookupAccount(spec.account, host_);
  if (!found) return found.error();
  if (found->uid == 0 && !options_.allow_root) {
    return Status(StatusCode::kPermissionDenied,
                  "account `" + spec.account + "` has uid 0 on host " + host_ +
                      ": jobs of uid 0 are refused (auth.allow_root_jobs)");
  }
  const uid_t self = geteuid();
  if (self != 0 && found->uid != self) {
    return Status(StatusCode::kPermissionDenied,
                  "the agent on host " + host_ + " runs as uid " + std::to_string(self) +
                      ", not root: it cannot run jobs of account `" + spec.account + "`");
  }
  account = std::move(*found);
  return Status::Ok();
}

Status JobRunner::Start(const JobSpec& spec, TimePoint now, const StepStdio* stdio) {
  if (entries_.contains(spec.job)) {
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(spec.job) + " runs already");
  }
  // 1. The account, looked up before fork (NSS may allocate, open files, talk to daemons).
  std::optional<Account> account;
  SLUICE_RETURN_IF_ERROR(ResolveIdentity(spec, account));
  Prepared prepared = Prepare(spec, account, cgroups_ != nullptr && cgroups_->FencesDevices());
  if (stdio != nullptr) {
    for (int fd = 0; fd < 3; ++fd) prepared.stdio[fd] = stdio->fds[fd];
    prepared.tty = stdio->tty;
  }
  if (!options_.exit_record_dir.empty()) {
    prepared.exit_record = ExitRecordPath(spec.job);
    prepared.lease_file = options_.lease_file;
    prepared.shepherd_title = "sluice-shepherd job " + std::to_string(spec.job);
  }
  // 2. Containment: the job's cgroup with its limits, or an rlimit.
  SLUICE_RETURN_IF_ERROR(Contain(cgroups_.get(), Binder(), spec, options_.pids_limit, prepared));
  // 3. Fork and exec; a failed step in the child comes back through the pipe.
  Result<pid_t> pid = Spawn(prepared, options_.launch_timeout, abandoned_);
  if (!pid) {
    if (!prepared.exit_record.empty()) unlink(prepared.exit_record.c_str());
    if (cgroups_ != nullptr && !cgroups_->Remove(spec.job).ok()) leftovers_.push_back(spec.job);
    if (binder_) binder_->Release(spec.job);
    return pid.error();
  }
  Entry entry{.pid = *pid, .run = spec.run, .contained = cgroups_ != nullptr};
  entry.started = now;
  if (spec.run_limit) entry.limit_at = now + *spec.run_limit;
  entries_.emplace(spec.job, entry);
  return Status::Ok();
}

void JobRunner::SignalJob(int64_t job, const Entry& entry, int signal) {
  // A contained job's cgroup holds its process group too: signalling both would deliver a
  // SIGTERM twice (a job's trap would run twice). SIGKILL goes both ways, to be sure.
  if (entry.contained) cgroups_->Signal(job, signal);
  // The group only while the leader is not reaped: afterwards its pid may be reused.
  if ((!entry.contained || signal == SIGKILL) && !entry.ended) kill(-entry.pid, signal);
}

std::string JobRunner::ExitRecordPath(int64_t job) const {
  return options_.exit_record_dir + "/" + std::to_string(job);
}

// WNOWAIT: the leader stays a zombie, so its pid (the group id) cannot be reused until the
// rest of the group has been killed in ReapLeader.
bool JobRunner::LeaderExited(pid_t pid, siginfo_t& info) {
  info = siginfo_t{};
  return waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
}

bool JobRunner::Terminate(int64_t job, Entry& entry, ExitCause cause,
                          std::chrono::milliseconds grace, TimePoint now) {
  // A job whose leader had exited before this kill (not reaped yet), or whose shepherd had
  // recorded its end (the shepherd may still be syncing the record), ended by itself: its own
  // exit stands (issue 44: runs that completed before their agent fenced, reaped after, were
  // reported "fenced", requeued and run again). Its group is still signalled (leftovers).
  siginfo_t info{};
  const bool exited =
      LeaderExited(entry.pid, info) ||
      (!options_.exit_record_dir.empty() && access(ExitRecordPath(job).c_str(), F_OK) == 0);
  if (!entry.kill_cause && !exited) entry.kill_cause = cause;
  if (entry.sigkill_at) {
    // Already terminating: a shorter grace may bring the SIGKILL forward, never push it back.
    entry.sigkill_at = std::min(*entry.sigkill_at, now + grace);
    return false;
  }
  SignalJob(job, entry, SIGTERM);
  entry.sigkill_at = now + grace;
  return true;
}

bool JobRunner::Kill(int64_t job, std::chrono::milliseconds grace, TimePoint now) {
  auto it = entries_.find(job);
  if (it == entries_.end() || it->second.ended) return false;
  return Terminate(job, it->second, ExitCause::kKilled, grace, now);
}

void JobRunner::KillAll(std::chrono::milliseconds grace, TimePoint now, ExitCause cause) {
  for (auto& [job, entry] : entries_) {
    if (!entry.ended) Terminate(job, entry, cause, grace, now);
  }
  for (int64_t job : std::vector<int64_t>(step_groups_.begin(), step_groups_.end())) EndSteps(job);
}

Result<pid_t> JobRunner::StartStep(const StepSpec& spec, const StepStdio& stdio) {
  JobSpec job{.job = spec.job,
              .command = spec.command,
              .cwd = spec.cwd,
              .env = spec.env,
              .account = spec.account,
              .mem_limit_mb = spec.mem_limit_mb,
              .cpu_limit = spec.cpu_limit,
              .umask = spec.umask,
              .gpus = spec.gpus};
  std::optional<Account> account;
  SLUICE_RETURN_IF_ERROR(ResolveIdentity(job, account));
  Prepared prepared = Prepare(job, account, cgroups_ != nullptr && cgroups_->FencesDevices());
  for (int fd = 0; fd < 3; ++fd) prepared.stdio[fd] = stdio.fds[fd];
  prepared.tty = stdio.tty;
  // Where the job runs here, its steps join its cgroup (and die with it); elsewhere they get
  // one of their own with the job's limits on this host, made at the first step.
  if (cgroups_ != nullptr) {
    auto entry = entries_.find(spec.job);
    if (entry != entries_.end() && entry->second.contained) {
      prepared.cgroup_procs = cgroups_->ProcsFiles(spec.job);
    } else if (entry == entries_.end()) {
      if (!step_groups_.contains(spec.job)) {
        SLUICE_RETURN_IF_ERROR(
            Contain(cgroups_.get(), Binder(), job, options_.pids_limit, prepared));
        step_groups_.insert(spec.job);
      }
      prepared.cgroup_procs = cgroups_->ProcsFiles(spec.job);
    }
  } else if (spec.mem_limit_mb) {
    prepared.data_limit = static_cast<rlim_t>(*spec.mem_limit_mb) << 20;
  }
  return Spawn(prepared, options_.launch_timeout, abandoned_);
}

void JobRunner::EndSteps(int64_t job) {
  if (!step_groups_.erase(job) || cgroups_ == nullptr) return;
  if (binder_) binder_->Release(job);
  cgroups_->Signal(job, SIGKILL);
  if (!WaitEmpty(*cgroups_, job, std::chrono::milliseconds(500)) || !cgroups_->Remove(job).ok()) {
    leftovers_.push_back(job);  // Poll retries
  }
}

Status JobRunner::Adopt(const AdoptedJob& adopted) {
  if (entries_.contains(adopted.job)) {
    return Status(StatusCode::kAlreadyExists,
                  "job " + std::to_string(adopted.job) + " runs already");
  }
  // The pidfd first, then the start time: if it matches, the pidfd is that shepherd's (a pid
  // reused before the open would show another start time).
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, adopted.shepherd, 0));
  if (pidfd < 0) {
    return Status(StatusCode::kNotFound, "job " + std::to_string(adopted.job) + ": shepherd " +
                                             std::to_string(adopted.shepherd) +
                                             ": pidfd_open: " + std::strerror(errno));
  }
  if (adopted.start == 0 || ProcessStartTime(adopted.shepherd) != adopted.start) {
    close(pidfd);
    return Status(StatusCode::kNotFound, "job " + std::to_string(adopted.job) + ": shepherd " +
                                             std::to_string(adopted.shepherd) + " is gone");
  }
  Entry entry{.pid = adopted.shepherd, .run = adopted.run, .pidfd = pidfd};
  entry.contained = cgroups_ != nullptr && !cgroups_->Empty(adopted.job);
  entry.started = adopted.now;
  entry.limit_at = adopted.limit_at;
  entries_.emplace(adopted.job, entry);
  return Status::Ok();
}

std::vector<int64_t> JobRunner::Release() {
  std::vector<int64_t> released;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.ended) {
      ++it;
      continue;
    }
    if (it->second.pidfd >= 0) close(it->second.pidfd);
    released.push_back(it->first);
    it = entries_.erase(it);  // its cgroup stays: the next agent adopts the job with it
  }
  return released;
}

std::optional<TimePoint> JobRunner::RunLimitAt(int64_t job) const {
  auto it = entries_.find(job);
  return it == entries_.end() ? std::nullopt : it->second.limit_at;
}

bool JobRunner::AdoptedEnded(const Entry& entry) {
  pollfd p{.fd = entry.pidfd, .events = POLLIN, .revents = 0};
  return poll(&p, 1, 0) == 1;
}

void JobRunner::ReapAdopted(int64_t job, Entry& entry, TimePoint now) {
  // Not this process's child: how it ended is in its shepherd's record, written before the
  // shepherd exited (job_shepherd.h).
  const std::string record_path = ExitRecordPath(job);
  const std::optional<ExitRecord> record = ReadExitRecord(record_path);
  JobExit exit{.job = job, .run = entry.run};
  if (record) {
    exit.exit_code = record->exit_code;
    exit.signal = record->signal;
    exit.cpu_seconds = record->cpu_seconds;
    exit.max_rss_mb = record->max_rss_mb;
  } else {
    exit.signal = SIGKILL;
    exit.message = "its shepherd ended without recording how the job ended";
  }
  exit.cause = ReportedCause(entry.kill_cause, exit.exit_code.has_value());
  if (record && record->agent_died && !entry.kill_cause) {
    exit.cause = ExitCause::kFenced;
    exit.message = "killed by its shepherd: no agent renewed the host's lease in time";
  }
  if (on_leader_exit_) on_leader_exit_(exit);
  unlink(record_path.c_str());
  close(entry.pidfd);
  entry.pidfd = -1;
  entry.ended = exit;
  entry.drain_until = now + options_.drain_timeout;
}

void JobRunner::ReapLeader(int64_t job, Entry& entry, TimePoint now) {
  // The leader is still a zombie (WNOWAIT), so its group id cannot have been reused.
  SignalJob(job, entry, SIGKILL);
  int status = 0;
  rusage usage{};
  wait4(entry.pid, &status, 0, &usage);
  JobExit exit = ExitOfWaitStatus(job, status, usage);
  exit.run = entry.run;
  exit.cause = ReportedCause(entry.kill_cause, WIFEXITED(status));
  if (!options_.exit_record_dir.empty()) {
    // The shepherd's record holds the job's own rusage (the shepherd's maximum RSS would be
    // the agent's it was forked from). The exit is journaled by now (OnLeaderExit).
    const std::string record = ExitRecordPath(job);
    if (std::optional<ExitRecord> recorded = ReadExitRecord(record)) {
      exit.cpu_seconds = recorded->cpu_seconds;
      exit.max_rss_mb = recorded->max_rss_mb;
    }
    unlink(record.c_str());
  }
  entry.ended = exit;
  entry.drain_until = now + options_.drain_timeout;
}

JobExit JobRunner::Finish(int64_t job, Entry& entry) {
  JobExit exit = *entry.ended;
  if (!entry.contained) return exit;
  const CgroupUsage usage = cgroups_->Usage(job);
  if (usage.cpu_seconds) exit.cpu_seconds = *usage.cpu_seconds;
  if (usage.peak_mb) exit.max_rss_mb = *usage.peak_mb;
  if (usage.oom_kills > 0 && !entry.kill_cause) {
    exit.cause = ExitCause::kMemLimit;
    exit.message = MemLimitMessage(usage);
  }
  if (!cgroups_->Remove(job).ok()) leftovers_.push_back(job);
  if (binder_) binder_->Release(job);  // a process stuck in the kernel runs no more
  return exit;
}

void JobRunner::RetryLeftovers() {
  std::erase_if(leftovers_, [this](int64_t job) {
    if (entries_.contains(job)) return true;  // started again: Create replaced the cgroup
    cgroups_->Signal(job, SIGKILL);
    return cgroups_->Remove(job).ok();
  });
}

bool JobRunner::Signal(int64_t job, uint64_t run, int signal) {
  if (auto it = entries_.find(job); it != entries_.end() && !it->second.ended) {
    if (run != 0 && it->second.run != 0 && it->second.run != run) return false;
    SignalJob(job, it->second, signal);
    return true;
  }
  if (cgroups_ != nullptr && step_groups_.contains(job)) {
    cgroups_->Signal(job, signal);
    return true;
  }
  return false;
}

bool JobRunner::StepsContained(int64_t job) const {
  if (cgroups_ == nullptr) return false;
  auto it = entries_.find(job);
  return it != entries_.end() ? it->second.contained : step_groups_.contains(job);
}

bool JobRunner::SetRunLimit(int64_t job, std::optional<std::chrono::milliseconds> run_limit) {
  auto it = entries_.find(job);
  if (it == entries_.end() || it->second.ended) return false;
  Entry& entry = it->second;
  entry.limit_at.reset();
  if (run_limit) entry.limit_at = entry.started + *run_limit;
  return true;
}

std::vector<JobExit> JobRunner::Poll(TimePoint now, std::chrono::milliseconds run_limit_grace) {
  RetryLeftovers();
  std::erase_if(abandoned_, [](pid_t pid) {
    int status = 0;
    return waitpid(pid, &status, WNOHANG) != 0;  // reaped (or not ours any more)
  });
  std::vector<JobExit> exits;
  for (auto it = entries_.begin(); it != entries_.end();) {
    const int64_t job = it->first;
    Entry& entry = it->second;
    if (!entry.ended && entry.pidfd >= 0 && AdoptedEnded(entry)) ReapAdopted(job, entry, now);
    if (!entry.ended) {
      siginfo_t info{};
      if (entry.pidfd < 0 && LeaderExited(entry.pid, info)) {
        if (on_leader_exit_) {
          JobExit seen{.job = job,
                       .run = entry.run,
                       .cause = ReportedCause(entry.kill_cause, info.si_code == CLD_EXITED)};
          if (info.si_code == CLD_EXITED) {
            seen.exit_code = info.si_status;
          } else {
            seen.signal = info.si_status;
          }
          on_leader_exit_(seen);
        }
        ReapLeader(job, entry, now);
      } else {
        if (entry.limit_at && now >= *entry.limit_at && !entry.sigkill_at) {
          Terminate(job, entry, ExitCause::kRunLimit, run_limit_grace, now);
        }
        if (entry.sigkill_at && now >= *entry.sigkill_at && !entry.sigkill_sent) {
          SignalJob(job, entry, SIGKILL);  // once: a KILL cannot be ignored
          entry.sigkill_sent = true;
        }
        ++it;
        continue;
      }
    }
    // The leader is gone; with a cgroup, the job ends when the last of its processes has.
    if (entry.contained && !cgroups_->Empty(job) && now < entry.drain_until) {
      cgroups_->Signal(job, SIGKILL);
      ++it;
      continue;
    }
    exits.push_back(Finish(job, entry));
    it = entries_.erase(it);
  }
  return exits;
}

std::vector<int64_t> JobRunner::Running() const {
  std::vector<int64_t> jobs;
  jobs.reserve(entries_.size());
  for (const auto& [job, entry] : entries_) jobs.push_back(job);
  return jobs;
}

pid_t JobRunner::Leader(int64_t job) const {
  auto it = entries_.find(job);
  return it == entries_.end() ? 0 : it->second.pid;
}

}  // namespace sluice::agent
