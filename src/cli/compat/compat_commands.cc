#include "cli/compat/compat_commands.h"

#include <vector>

namespace sluice::cli::compat {
namespace {

struct Command {
  std::string_view name;
  int (*run)(Args);
};

constexpr Command kCommands[] = {
    {"sbatch", Sbatch},   {"squeue", Squeue},   {"sacct", Sacct},     {"scontrol", Scontrol},
    {"scancel", Scancel}, {"sinfo", Sinfo},     {"bsub", Bsub},       {"bjobs", Bjobs},
    {"bkill", Bkill},     {"bhist", Bhist},     {"bqueues", Bqueues}, {"bhosts", Bhosts},
    {"bparams", Bparams}, {"lsadmin", Lsadmin}, {"lsid", Lsid},       {"srun", Srun},
    {"blaunch", Blaunch}, {"salloc", Salloc},   {"bmod", Bmod},       {"brequeue", Brequeue},
    {"bpeek", Bpeek},
};

}  // namespace

bool IsCompatCommand(std::string_view program) {
  for (const Command& c : kCommands) {
    if (c.name == program) return true;
  }
  return false;
}

std::optional<int> RunCompatCommand(std::string_view program, Args args) {
  for (const Command& c : kCommands) {
    if (c.name == program) return c.run(args);
  }
  return std::nullopt;
}

std::string_view ProgramName(const char* argv0) {
  const std::string_view path = argv0 == nullptr ? "" : argv0;
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<int> RunCompatMain(int argc, const char* const* argv) {
  if (argc < 1 || !IsCompatCommand(ProgramName(argv[0]))) return std::nullopt;
  const std::vector<std::string> args(argv + 1, argv + argc);
  return RunCompatCommand(ProgramName(argv[0]), args);
}

}  // namespace sluice::cli::compat
