#include "agent/job_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <linux/close_range.h>

extern char** environ;

namespace sluice::agent {
namespace {

// What the child reports through the error pipe when a step before exec fails.
enum ChildStep : int { kStepChdir = 1, kStepStdout, kStepStderr, kStepExec, kStepSession };
struct ChildFailure {
  int step = 0;
  int error = 0;
};

// Everything the child touches, prepared before fork (no allocation after fork).
struct Prepared {
  std::string program;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::string cwd;
  std::string output;
  std::string error;
  std::vector<char*> argv_ptrs;
  std::vector<char*> env_ptrs;
};

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
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

Prepared Prepare(const JobSpec& spec) {
  Prepared p;
  std::map<std::string, std::string> env = CurrentEnvironment();
  for (const auto& [key, value] : spec.env) env[key] = value;
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
  for (std::string& arg : p.args) p.argv_ptrs.push_back(arg.data());
  p.argv_ptrs.push_back(nullptr);
  for (std::string& entry : p.env) p.env_ptrs.push_back(entry.data());
  p.env_ptrs.push_back(nullptr);
  return p;
}

[[noreturn]] void ChildFail(int pipe_fd, int step) {
  ChildFailure failure{.step = step, .error = errno};
  ssize_t ignored = write(pipe_fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

// Runs in the child: async-signal-safe calls only.
[[noreturn]] void ChildMain(const Prepared& p, int pipe_fd, pid_t parent) {
  if (setsid() < 0) ChildFail(pipe_fd, kStepSession);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the agent died before prctl took effect
  // Ignored signals stay ignored across exec; the job gets the defaults.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2}) {
    sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // No descriptor of the agent (sockets, the store) leaks into the job.
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 4096; ++fd) {
      if (fd != pipe_fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
  }
  const int null_in = open("/dev/null", O_RDONLY);
  if (null_in >= 0) dup2(null_in, STDIN_FILENO);
  if (!p.cwd.empty() && chdir(p.cwd.c_str()) != 0) ChildFail(pipe_fd, kStepChdir);
  const int out = open(p.output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) ChildFail(pipe_fd, kStepStdout);
  int err = out;
  if (!p.error.empty() && p.error != p.output) {
    err = open(p.error.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err < 0) ChildFail(pipe_fd, kStepStderr);
  }
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  execve(p.program.c_str(), p.argv_ptrs.data(), p.env_ptrs.data());
  ChildFail(pipe_fd, kStepExec);
}

std::string DescribeFailure(const ChildFailure& failure, const Prepared& p) {
  std::string what;
  switch (failure.step) {
    case kStepChdir: what = "chdir: " + p.cwd; break;
    case kStepStdout: what = "open output: " + p.output; break;
    case kStepStderr: what = "open error: " + p.error; break;
    case kStepExec: what = "exec: " + p.program; break;
    default: what = "setsid"; break;
  }
  return what + ": " + std::strerror(failure.error);
}

}  // namespace

std::string_view ToString(ExitCause cause) {
  switch (cause) {
    case ExitCause::kExit: return "exit";
    case ExitCause::kRunLimit: return "run_limit";
    case ExitCause::kKilled: return "killed";
  }
  return "exit";
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

JobRunner::~JobRunner() {
  for (auto& [job, entry] : entries_) {
    kill(-entry.pid, SIGKILL);
    int status = 0;
    waitpid(entry.pid, &status, 0);
  }
}

Status JobRunner::Start(const JobSpec& spec, TimePoint now) {
  if (entries_.contains(spec.job)) {
    return Status(StatusCode::kAlreadyExists, "job " + std::to_string(spec.job) + " runs already");
  }
  Prepared prepared = Prepare(spec);
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
  ssize_t got;
  do {
    got = read(pipe_fds[0], &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  close(pipe_fds[0]);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    int status = 0;
    waitpid(pid, &status, 0);
    return FailedPrecondition(DescribeFailure(failure, prepared));
  }
  Entry entry{.pid = pid};
  if (spec.run_limit) entry.limit_at = now + *spec.run_limit;
  entries_.emplace(spec.job, entry);
  return Status::Ok();
}

void JobRunner::Terminate(Entry& entry, ExitCause cause, std::chrono::milliseconds grace,
                          TimePoint now) {
  if (!entry.kill_cause) entry.kill_cause = cause;
  if (entry.sigkill_at) {
    // Already terminating: a shorter grace may bring the SIGKILL forward, never push it back.
    entry.sigkill_at = std::min(*entry.sigkill_at, now + grace);
    return;
  }
  kill(-entry.pid, SIGTERM);
  entry.sigkill_at = now + grace;
}

bool JobRunner::Kill(int64_t job, std::chrono::milliseconds grace, TimePoint now) {
  auto it = entries_.find(job);
  if (it == entries_.end()) return false;
  Terminate(it->second, ExitCause::kKilled, grace, now);
  return true;
}

void JobRunner::KillAll(std::chrono::milliseconds grace, TimePoint now) {
  for (auto& [job, entry] : entries_) Terminate(entry, ExitCause::kKilled, grace, now);
}

std::vector<JobExit> JobRunner::Poll(TimePoint now, std::chrono::milliseconds run_limit_grace) {
  std::vector<JobExit> exits;
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& entry = it->second;
    siginfo_t info{};
    // WNOWAIT: the leader stays a zombie, so its pid (the group id) cannot be reused until
    // the rest of the group has been killed below.
    if (waitid(P_PID, entry.pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0) {
      kill(-entry.pid, SIGKILL);
      int status = 0;
      waitpid(entry.pid, &status, 0);
      JobExit exit{.job = it->first, .cause = entry.kill_cause.value_or(ExitCause::kExit)};
      if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
      exits.push_back(exit);
      it = entries_.erase(it);
      continue;
    }
    if (entry.limit_at && now >= *entry.limit_at && !entry.sigkill_at) {
      Terminate(entry, ExitCause::kRunLimit, run_limit_grace, now);
    }
    if (entry.sigkill_at && now >= *entry.sigkill_at) {
      kill(-entry.pid, SIGKILL);
    }
    ++it;
  }
  return exits;
}

std::vector<int64_t> JobRunner::Running() const {
  std::vector<int64_t> jobs;
  jobs.reserve(entries_.size());
  for (const auto& [job, entry] : entries_) jobs.push_back(job);
  return jobs;
}

}  // namespace sluice::agent
