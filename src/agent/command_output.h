// Running a helper program of the host to read what it prints (the agent's GPU detection runs
// nvidia-smi this way, gpu_detect.h): found on a search path, started without a shell, its
// output captured, and killed if it does not finish in time, so that a hung driver call cannot
// hang the agent with it.
//
// The program runs in its own process group with stdin from /dev/null, the caller's
// environment (or the one the limits give), default signal dispositions and no descriptor of the
// caller but 0-2 (an agent's sockets must not outlive it in a hung helper). At the deadline the
// whole group gets SIGKILL (a wrapper script's children too) and the program is reaped before
// RunCommand returns. Thread-safety: both functions may be called from any thread (posix_spawn, no
// globals).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sluice::agent {

// The first executable regular file named `program` in the directories of `search_path`
// (colon-separated, as $PATH). Empty and relative entries are skipped: a helper is never run
// from whatever the current directory happens to be. nullopt: found nowhere.
std::optional<std::string> FindOnPath(std::string_view program, std::string_view search_path);

struct CommandOutput {
  int exit_code = 0;  // as the program exited (it was not killed)
  std::string out;    // its stdout
  std::string err;    // its stderr
};

struct CommandLimits {
  std::chrono::milliseconds timeout{10'000};
  size_t max_bytes = 1 << 20;  // of stdout and of stderr each
  // "NAME=value" entries; nullopt: the caller's environment.
  std::optional<std::vector<std::string>> environment;
};

// How a run ended, with what it printed until then (RunCommandToEnd).
struct CommandRun {
  CommandOutput output;          // exit_code as it exited (0 when it did not)
  std::optional<int> signal;     // it died of this signal (not one of ours)
  bool timed_out = false;        // killed at the timeout
  bool too_much_output = false;  // killed for printing more than max_bytes
};

// As RunCommand, but every end of a run that started is a CommandRun, with the output printed
// before a kill (a health program's `ERROR` line before it hung).
// REQUIRES: !argv.empty().
// Errors: kUnavailable when it cannot be started or its exit status was lost.
Result<CommandRun> RunCommandToEnd(const std::vector<std::string>& argv,
                                   const CommandLimits& limits = {});

// Runs `argv` (argv[0] an absolute path) until it exits. A non-zero exit is not an error here:
// the caller reads `exit_code` with the output.
// REQUIRES: !argv.empty().
// Errors: kUnavailable when it cannot be started, was killed at the timeout, or died of a
// signal (the message says which); kResourceExhausted when it printed more than max_bytes
// (it is killed then, as at the timeout).
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                 const CommandLimits& limits = {});

}  // namespace sluice::agent
