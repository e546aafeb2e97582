#include "cli/submit_script.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "client/compat/env_export.h"
#include "client/directives.h"
#include "wire/job_script.h"

extern char** environ;

namespace sluice::cli {

std::map<std::string, std::string> CallerEnvironment() {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    entries.emplace_back(*entry);
  }
  std::map<std::string, std::string> env = client::compat::EnvironmentOf(entries);
  env.erase("SLUICE_TOKEN");  // a credential never travels (the server drops it too)
  return env;
}

int CallerUmask() {
  const mode_t mask = umask(0);
  umask(mask);
  return static_cast<int>(mask);
}

// Reads at most kMaxScriptBytes + 1 bytes, so an oversized script is refused without reading
// all of it.
Result<std::string> ReadScript(std::istream& in, const std::string& where) {
  std::string text(wire::kMaxScriptBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return InvalidArgument(where + ": cannot be read");
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > wire::kMaxScriptBytes) {
    return Status(StatusCode::kResourceExhausted, where + ": a job script may have at most " +
                                                      std::to_string(wire::kMaxScriptBytes) +
                                                      " bytes");
  }
  if (text.empty()) return InvalidArgument(where + ": the script is empty");
  return text;
}

Result<Submission> ResolveSubmission(const client::SubmitFlags& flags, bool dash_dash,
                                     std::istream* in, int64_t now,
                                     const std::map<std::string, std::string>& caller_env) {
  Submission out{.flags = flags};
  std::error_code error;
  const bool from_file = !dash_dash && !flags.command.empty() &&
                         std::filesystem::is_regular_file(flags.command.front(), error);
  const bool from_stdin = flags.command.empty() && in != nullptr;
  if (!from_file && !from_stdin) return out;  // a command (BuildSubmitBody checks it is there)
  std::string where = "stdin";
  Result<std::string> script = InvalidArgument("no script");
  if (from_file) {
    where = flags.command.front();
    std::ifstream file(where, std::ios::binary);
    if (!file) return InvalidArgument(where + ": cannot be opened");
    script = ReadScript(file, where);
  } else {
    script = ReadScript(*in, where);
  }
  if (!script) return script.error();
  Result<client::Directives> directives = client::ParseDirectives(*script, where, now);
  if (!directives) return directives.error();
  out.flags = client::MergeFlags(flags, directives->flags);
  out.warnings = std::move(directives->warnings);
  // A script's #SBATCH --export / #BSUB -env, unless the command line's --export says otherwise.
  if (!flags.export_env.empty()) {
    // the command line wins (BuildSubmitBody applies it)
  } else if (directives->slurm_export) {
    Result<client::compat::Environment> env =
        client::compat::ResolveSlurmExport(*directives->slurm_export, caller_env);
    if (!env) return env.error().WithPrefix(where + ": #SBATCH");
    out.flags.env = std::move(*env);
  } else if (directives->lsf_env) {
    Result<client::compat::Environment> env =
        client::compat::ResolveLsfEnv(directives->lsf_env, caller_env);
    if (!env) return env.error().WithPrefix(where + ": #BSUB");
    out.flags.env = std::move(*env);
  }
  if (from_stdin) out.flags.command = {"stdin"};
  if (out.flags.name.empty()) {
    out.flags.name = std::filesystem::path(out.flags.command.front()).filename().string();
  }
  out.flags.script = std::move(*script);
  return out;
}

}  // namespace sluice::cli
