#include "cli/front_end.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/compat/compat_commands.h"

namespace sluice::cli {
namespace {

constexpr std::array<std::string_view, 18> kFrontEndVerbs = {
    "submit", "jobs",   "cancel",  "hold",    "release", "hosts",  "queues", "limits", "queue",
    "host",   "modify", "requeue", "history", "peek",    "launch", "run",    "alloc",  "rsv"};

// The complete binary: `sluice-full` in the directory of this executable.
std::string FullBinary() {
  std::string self(4096, '\0');
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return "sluice-full";
  self.resize(static_cast<size_t>(n));
  const size_t slash = self.rfind('/');
  return (slash == std::string::npos ? std::string() : self.substr(0, slash + 1)) + "sluice-full";
}

// The verb alone, or its group where a file registers several together, as cli::Main registers
// them (app.cc); the other verbs are left out (CLI11 builds every option of every verb it is
// given: ~0.1 ms a group).
int RunClientVerbs(int argc, char** argv) {
  CLI::App app{"sluice: a batch workload scheduler for clusters"};
  app.require_subcommand(1);
  int exit_code = 0;
  const std::string_view verb = argv[1];
  if (verb == "history") {
    RegisterHistoryCommand(app, exit_code);
  } else if (verb == "modify" || verb == "requeue") {
    RegisterJobChangeCommands(app, exit_code);
  } else if (verb == "peek") {
    RegisterPeekCommand(app, exit_code);
  } else if (verb == "launch") {
    RegisterLaunchCommand(app, exit_code);
  } else if (verb == "run" || verb == "alloc") {
    RegisterRunCommands(app, exit_code);
  } else if (verb == "rsv") {
    RegisterRsvCommand(app, exit_code);
  } else {
    RegisterClientCommands(app, exit_code, verb);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}

}  // namespace

bool IsFrontEndVerb(std::string_view verb) {
  for (std::string_view v : kFrontEndVerbs) {
    if (v == verb) return true;
  }
  return false;
}

bool RunsInFrontEnd(int argc, const char* const* argv, const char* env_server) {
  if (argc < 2 || !IsFrontEndVerb(argv[1])) return false;
  if (env_server != nullptr && std::strstr(env_server, "https://") != nullptr) return false;
  for (int i = 1; i < argc; ++i) {
    if (std::strstr(argv[i], "https://") != nullptr) return false;
  }
  return true;
}

int FrontEndMain(int argc, char** argv) {
  // Under a Slurm or LSF name (R-COMPAT-1): that command, here unless it needs https://.
  const char* env_server = std::getenv("SLUICE_SERVER");
  if (env_server == nullptr || std::strstr(env_server, "https://") == nullptr) {
    if (std::optional<int> code = compat::RunCompatMain(argc, argv)) return *code;
  }
  if (RunsInFrontEnd(argc, argv, std::getenv("SLUICE_SERVER"))) return RunClientVerbs(argc, argv);
  const std::string full = FullBinary();
  execv(full.c_str(), argv);
  std::cerr << "error: cannot run " << full << ": " << std::strerror(errno) << "\n";
  return 1;
}

}  // namespace sluice::cli
