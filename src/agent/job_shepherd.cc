#include "agent/job_shepherd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace sluice::agent {
namespace {

// The parent-death signal of a shepherd: blocked like every other, it only wakes the wait.
constexpr int kAgentDiedSignal = SIGUSR2;

// Appends `value` in decimal to `out` (async-signal-safe). Returns the new end.
char* AppendNumber(char* out, long long value) {
  if (value < 0) {
    *out++ = '-';
    value = -value;
  }
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && n < 20);
  while (n > 0) *out++ = digits[--n];
  return out;
}

long long Micros(const timeval& tv) { return tv.tv_sec * 1000000LL + tv.tv_usec; }

// Writes the record of the job's `status` (async-signal-safe); failures are ignored: the
// agent, if alive, still sees the exit, and a missing record only means "gone".
void WriteRecord(const char* path, int status, bool agent_died, const rusage& usage) {
  char line[128];
  char* end = line;
  *end++ = WIFEXITED(status) ? 'e' : 's';
  *end++ = ' ';
  end = AppendNumber(end, WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  *end++ = ' ';
  *end++ = agent_died ? '1' : '0';
  *end++ = ' ';
  end = AppendNumber(end, Micros(usage.ru_utime) + Micros(usage.ru_stime));
  *end++ = ' ';
  end = AppendNumber(end, usage.ru_maxrss);
  *end++ = '\n';
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const ssize_t ignored = write(fd, line, static_cast<size_t>(end - line));
  (void)ignored;
  fdatasync(fd);
  close(fd);
}

// Whether the agent's lease, as `path` says, has run out (async-signal-safe, no allocation).
// Unreadable, torn or missing: run out.
bool LeaseExpired(const char* path) {
  if (path == nullptr || *path == '\0') return true;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char text[32];
  const ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  if (got <= 0) return true;
  long long deadline_ms = 0;
  ssize_t i = 0;
  for (; i < got && text[i] >= '0' && text[i] <= '9' && i < 19; ++i) {
    deadline_ms = deadline_ms * 10 + (text[i] - '0');
  }
  if (i == 0 || i >= got || text[i] != '\n') return true;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const long long now_ms = now.tv_sec * 1000LL + now.tv_nsec / 1000000;
  return now_ms >= deadline_ms;
}

// Ends the shepherd the way the job ended (async-signal-safe).
[[noreturn]] void ExitLike(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  const int sig = WTERMSIG(status);
  const rlimit no_core{.rlim_cur = 0, .rlim_max = 0};
  setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, nullptr);
  kill(getpid(), sig);
  _exit(128 + sig);
}

// Closes every descriptor but `keep`: the shepherd outlives the agent, so it must not hold the
// agent's sockets or the flock of its journal (a restarted agent could not take it).
void CloseAllBut(int keep) {
  const bool below = keep <= 3 || syscall(SYS_close_range, 3U, keep - 1U, 0U) == 0;
  if (below && syscall(SYS_close_range, keep + 1U, ~0U, 0U) == 0) return;
  for (int fd = 3; fd < 4096; ++fd) {
    if (fd != keep) close(fd);
  }
}

// True while `pid` is the process that started at `start` and has not exited (a zombie has).
bool Alive(pid_t pid, uint64_t start) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 > text.size()) return false;
  std::istringstream fields(text.substr(close_paren + 2));
  std::string field;
  bool zombie = false;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3) zombie = field == "Z" || field == "X";
    if (i == 22) return !zombie && std::strtoull(field.c_str(), nullptr, 10) == start;
  }
  return false;
}

}  // namespace

void RunShepherd(const ShepherdFiles& files, pid_t agent, int error_pipe, JobMain job_main,
                 const void* arg) {
  CloseAllBut(error_pipe);
  // 1. Every signal blocked: a SIGTERM to the job's group or cgroup is the job's; only the
  // job's end and the agent's death matter here. The job restores an empty mask.
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  // 2. Not the OOM killer's choice in the job's cgroup (the job resets its own score).
  const int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (oom >= 0) {
    const ssize_t ignored = write(oom, "-1000", 5);
    (void)ignored;
    close(oom);
  }
  prctl(PR_SET_PDEATHSIG, kAgentDiedSignal);
  if (getppid() != agent) _exit(127);  // the agent died before the job started
  const pid_t shepherd = getpid();
  const pid_t job = fork();
  if (job < 0) _exit(127);
  if (job == 0) {
    job_main(arg, error_pipe, shepherd);
    _exit(127);
  }
  close(error_pipe);  // the agent's read ends once the job has exec'd (or failed)
  // 3. Wait for the job's end, or for the lease to run out once the agent has died.
  sigset_t wake;
  sigemptyset(&wake);
  sigaddset(&wake, SIGCHLD);
  sigaddset(&wake, kAgentDiedSignal);
  bool orphaned = false;
  bool killed = false;
  while (true) {
    int status = 0;
    rusage usage{};
    const pid_t reaped = wait4(job, &status, WNOHANG, &usage);
    if (reaped == job) {
      const bool agent_died = killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
      WriteRecord(files.record, status, agent_died, usage);
      ExitLike(status);
    }
    if (reaped < 0 && errno != EINTR) _exit(127);
    if (!orphaned && getppid() != agent) orphaned = true;  // for good: init is the parent now
    if (orphaned && !killed && LeaseExpired(files.lease)) {
      kill(job, SIGKILL);
      killed = true;
      continue;
    }
    // The signals wake it; an orphan also reads the lease file ten times a second.
    const timespec tick{.tv_sec = orphaned ? 0 : 1, .tv_nsec = orphaned ? 100'000'000 : 0};
    sigtimedwait(&wake, nullptr, &tick);
  }
}

std::optional<ExitRecord> ReadExitRecord(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  std::istringstream fields(line);
  char kind = 0;
  long long value = 0;
  int agent_died = 0;
  long long cpu_usec = 0;
  long long rss_kib = 0;
  if (!(fields >> kind >> value >> agent_died >> cpu_usec >> rss_kib)) return std::nullopt;
  if ((kind != 'e' && kind != 's') || value < 0 || value > 255) return std::nullopt;
  ExitRecord record;
  if (kind == 'e') {
    record.exit_code = static_cast<int>(value);
  } else {
    record.signal = static_cast<int>(value);
  }
  record.agent_died = agent_died != 0;
  record.cpu_seconds = static_cast<double>(cpu_usec) / 1e6;
  record.max_rss_mb = static_cast<double>(rss_kib) / 1024.0;
  return record;
}

std::map<int64_t, ExitRecord> ReadExitRecords(const std::string& dir) {
  std::map<int64_t, ExitRecord> records;
  DIR* listing = opendir(dir.c_str());
  if (listing == nullptr) return records;
  while (dirent* entry = readdir(listing)) {
    char* end = nullptr;
    const long long job = std::strtoll(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || job <= 0) continue;
    const std::string path = dir + "/" + entry->d_name;
    if (std::optional<ExitRecord> record = ReadExitRecord(path)) records[job] = *record;
    unlink(path.c_str());
  }
  closedir(listing);
  return records;
}

bool ShepherdAlive(const JournalLaunch& launch) {
  return launch.pgid > 1 && launch.start != 0 && Alive(launch.pgid, launch.start);
}

int WaitForShepherds(const std::map<int64_t, JournalLaunch>& launched,
                     std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int alive = 0;
    for (const auto& [job, launch] : launched) {
      if (ShepherdAlive(launch)) ++alive;
    }
    if (alive == 0 || std::chrono::steady_clock::now() >= deadline) return alive;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace sluice::agent
