#include "cli/compat/compat_commands.h"

#include <iostream>
#include <vector>

#include "cli/compat/job_lookup.h"

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
    {"bpeek", Bpeek},     {"brsvadd", Brsvadd}, {"brsvs", Brsvs},     {"brsvdel", Brsvdel},
};

}  // namespace

int LsfUsage(std::string_view program, const std::string& message) {
  std::cerr << program << ": " << message << "\n";
  return kLsfFailure;
}

int ActOnLsfJobs(std::string_view program, const std::vector<std::string>& ids,
                 const std::string& action, const std::string& done,
                 std::string (*refused)(StatusCode code), const nlohmann::json& body) {
  if (ids.empty()) return LsfUsage(program, "a job id is required");
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return LsfUsage(program, rest.error().message());
  int code = 0;
  for (const std::string& text : ids) {
    Result<int64_t> id = ParseJobId(text);
    Result<nlohmann::json> answer =
        id ? (*rest)->Post("/v1/jobs/" + std::to_string(*id) + "/" + action, body)
           : Result<nlohmann::json>(id.error());
    if (answer) {
      std::cout << "Job <" << text << "> " << done << "\n";
      continue;
    }
    code = kLsfFailure;
    const StatusCode why = answer.error().code();
    const std::string words = refused != nullptr ? refused(why) : "";
    if (!words.empty()) {
      std::cerr << "Job <" << text << ">: " << words << "\n";
    } else if (why == StatusCode::kNotFound || why == StatusCode::kInvalidArgument) {
      std::cerr << "Job <" << text << ">: No matching job found\n";
    } else {
      std::cerr << "Job <" << text << ">: " << answer.error().message() << "\n";
    }
  }
  return code;
}

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
