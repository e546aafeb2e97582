// Test helper: which processes run a given command line, read from /proc (for the tests that
// prove a job leaves nothing behind: cancel, run limit, preemption, an agent's crash).
#ifndef SLUICE_TESTING_PROC_SCAN_H_
#define SLUICE_TESTING_PROC_SCAN_H_

#include <dirent.h>
#include <sys/types.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::testing {

// The pids whose command line is exactly `argv` (NUL-separated in /proc/PID/cmdline).
inline std::vector<pid_t> ProcessesRunning(const std::vector<std::string>& argv) {
  std::string want;
  for (const std::string& arg : argv) want += arg + '\0';
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0') continue;
    std::ifstream in(std::string("/proc/") + entry->d_name + "/cmdline", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str() == want) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return found;
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTING_PROC_SCAN_H_
