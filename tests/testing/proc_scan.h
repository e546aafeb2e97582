// Test helper: which processes run a given command line, read from /proc (for the tests that
// prove a job leaves nothing behind: cancel, run limit, preemption, an agent's crash; and for
// waits on a process having exec'ed what it runs).
#ifndef SLUICE_TESTING_PROC_SCAN_H_
#define SLUICE_TESTING_PROC_SCAN_H_

#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::testing {

// The command line of `pid` as /proc/PID/cmdline holds it (each argument ended by a NUL);
// empty for a zombie or a process that is gone.
inline std::string CommandLineOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// True when process `pid` runs exactly `argv`: it has exec'ed it and not exited.
inline bool ProcessRuns(pid_t pid, const std::vector<std::string>& argv) {
  std::string want;
  for (const std::string& arg : argv) want += arg + '\0';
  return CommandLineOf(pid) == want;
}

// The pids of every process for which `matches(pid)` holds.
template <typename Matches>
std::vector<pid_t> ProcessesWhere(Matches matches) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0') continue;
    if (matches(static_cast<pid_t>(pid))) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return found;
}

// The pids whose command line is exactly `argv`; with `group` > 0, only those of that process
// group.
inline std::vector<pid_t> ProcessesRunning(const std::vector<std::string>& argv,
                                           pid_t group = 0) {
  return ProcessesWhere([&](pid_t pid) {
    return (group <= 0 || getpgid(pid) == group) && ProcessRuns(pid, argv);
  });
}

// The pids whose command line contains `text` (e.g. a path unique to one test's job).
inline std::vector<pid_t> ProcessesMentioning(const std::string& text) {
  return ProcessesWhere(
      [&](pid_t pid) { return CommandLineOf(pid).find(text) != std::string::npos; });
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTING_PROC_SCAN_H_
