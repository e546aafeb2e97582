#include "agent/command_output.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace sluice::agent {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Status Unavailable(std::string message) {
  return Status(StatusCode::kUnavailable, std::move(message));
}

// The read end of a pipe the program writes to, closed when it goes.
struct Stream {
  int fd = -1;
  std::string* into = nullptr;
  ~Stream() { Close(); }
  void Close() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

// posix_spawn rather than fork: the agent has threads, and the child of a multithreaded
// process may call only async-signal-safe functions before exec; posix_spawn does the
// descriptor and signal set-up for us.
Result<pid_t> Spawn(const std::vector<std::string>& argv, int out, int err,
                    const std::optional<std::vector<std::string>>& environment) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, err, 2);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // Ignored dispositions survive exec: the agent ignores SIGPIPE, the helper must not.
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: one kill reaches its children too
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  if (environment) {
    for (const std::string& entry : *environment) env.push_back(const_cast<char*>(entry.c_str()));
    env.push_back(nullptr);
  }
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(),
                             environment ? env.data() : environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Unavailable(argv[0] + ": cannot run: " + std::strerror(rc));
  return pid;
}

// Reads both streams until they close. Returns why the program must be killed ("" when it
// closed its outputs in time).
std::string ReadUntilClosed(Stream (&streams)[2], Clock::time_point deadline, size_t max_bytes) {
  char buffer[8192];
  while (streams[0].fd >= 0 || streams[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return "timeout";
    pollfd fds[2];
    nfds_t n = 0;
    Stream* polled[2];
    for (Stream& s : streams) {
      if (s.fd < 0) continue;
      fds[n] = pollfd{.fd = s.fd, .events = POLLIN, .revents = 0};
      polled[n++] = &s;
    }
    const int ready = poll(fds, n, static_cast<int>(left.count()) + 1);
    if (ready < 0 && errno != EINTR) return std::string("poll: ") + std::strerror(errno);
    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t got = read(polled[i]->fd, buffer, sizeof buffer);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        polled[i]->Close();
        continue;
      }
      polled[i]->into->append(buffer, static_cast<size_t>(got));
      if (polled[i]->into->size() > max_bytes) return "output";
    }
  }
  return "";
}

// Waits for `pid` to exit until the deadline (a program may close its outputs and go on).
// Returns "" with its wait status when it did, else why it must be killed ("timeout"), or
// "lost" when it cannot be waited for (reaped by someone else: nothing left to kill).
std::string Reap(pid_t pid, Clock::time_point deadline, int& status) {
  while (true) {
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) return "";
    if (got < 0 && errno != EINTR) return "lost";
    if (Clock::now() >= deadline) return "timeout";
    std::this_thread::sleep_for(milliseconds(5));
  }
}

}  // namespace

std::optional<std::string> FindOnPath(std::string_view program, std::string_view search_path) {
  if (program.empty() || program.find('/') != std::string_view::npos) return std::nullopt;
  size_t start = 0;
  while (start <= search_path.size()) {
    size_t end = search_path.find(':', start);
    if (end == std::string_view::npos) end = search_path.size();
    const std::string_view dir = search_path.substr(start, end - start);
    start = end + 1;
    if (dir.empty() || dir.front() != '/') continue;
    std::string candidate = std::string(dir) + "/" + std::string(program);
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

// Steps: 1. spawn with both outputs on close-on-exec pipes (Spawn); 2. read them until they
// close (ReadUntilClosed); 3. reap it (Reap); 4. at the deadline, or when it printed too much,
// kill its whole group and reap it.
Result<CommandRun> RunCommandToEnd(const std::vector<std::string>& argv,
                                   const CommandLimits& limits) {
  SLUICE_CHECK(!argv.empty());
  const std::string& program = argv[0];
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Unavailable(std::string("pipe: ") + strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Unavailable(std::string("pipe: ") + strerror(errno));
  }
  CommandRun run;
  Stream streams[2] = {{.fd = out_pipe[0], .into = &run.output.out},
                       {.fd = err_pipe[0], .into = &run.output.err}};
  const Clock::time_point deadline = Clock::now() + limits.timeout;
  Result<pid_t> pid = Spawn(argv, out_pipe[1], err_pipe[1], limits.environment);
  close(out_pipe[1]);  // ours; the program has its own copies, so EOF means it closed them
  close(err_pipe[1]);
  if (!pid) return pid.error();

  std::string kill_for = ReadUntilClosed(streams, deadline, limits.max_bytes);
  int status = 0;
  if (kill_for.empty()) kill_for = Reap(*pid, deadline, status);
  if (kill_for == "lost") return Unavailable(program + ": its exit status was lost");
  if (!kill_for.empty()) {
    kill(-*pid, SIGKILL);  // not reaped yet, so the group id is still its own
    while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (kill_for == "output") {
      run.too_much_output = true;
    } else if (kill_for == "timeout") {
      run.timed_out = true;
    } else {
      return Unavailable(program + ": " + kill_for + "; killed");
    }
    return run;
  }
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  run.output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  return run;
}

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                 const CommandLimits& limits) {
  Result<CommandRun> run = RunCommandToEnd(argv, limits);
  if (!run) return run.error();
  const std::string& program = argv[0];
  if (run->too_much_output) {
    return Status(
        StatusCode::kResourceExhausted,
        program + ": printed more than " + std::to_string(limits.max_bytes) + " bytes; killed");
  }
  if (run->timed_out) {
    return Unavailable(program + ": no answer within " + std::to_string(limits.timeout.count()) +
                       " ms; killed");
  }
  if (run->signal) {
    return Unavailable(program + ": killed by signal " + std::to_string(*run->signal));
  }
  return std::move(run->output);
}

}  // namespace sluice::agent
