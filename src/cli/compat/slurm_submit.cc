// sbatch (R-COMPAT-1): `sbatch [OPTIONS] [SCRIPT [ARGS...]]`, `sbatch [OPTIONS] --wrap CMD`, or
// the script on standard input; prints `Submitted batch job N` (`N` with --parsable) and
// nothing after it (Snakemake takes the last word of stdout and stderr together).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/compat/compat_commands.h"
#include "cli/compat/job_lookup.h"
#include "cli/compat/submission.h"
#include "cli/job_wait.h"
#include "cli/submit_script.h"
#include "client/compat/sbatch_request.h"
#include "client/directives.h"

namespace sluice::cli::compat {
namespace {

using client::compat::SbatchRequest;

int Error(const std::string& message) {
  std::cerr << "sbatch: error: " << message << "\n";
  return 1;
}

// The script Slurm makes of --wrap.
std::string WrapScript(const std::string& command) {
  return "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + command + "\n";
}

// The job's script, its name and arguments (`command`), and the #SBATCH lines' request.
struct Script {
  std::string text;
  std::vector<std::string> command;
  std::string default_name;
};

Result<Script> ScriptOf(const SbatchRequest& request, const std::vector<std::string>& operands) {
  Script out;
  if (request.wrap) {
    if (!operands.empty()) {
      return InvalidArgument("script argument not permitted with --wrap option");
    }
    return Script{WrapScript(*request.wrap), {"wrap"}, "wrap"};
  }
  const std::string path = operands.empty() ? "" : operands.front();
  Result<std::string> text = ReadJobScript(path);
  if (!text) return text.error();
  if (!text->starts_with("#!")) {
    return InvalidArgument(
        "This does not look like a batch script.  The first line must start with #! followed "
        "by the path to an interpreter.");
  }
  out.text = std::move(*text);
  out.command = operands.empty() ? std::vector<std::string>{"sbatch"} : operands;
  out.default_name = operands.empty() ? "sbatch"
                                      : std::filesystem::path(path).filename().string();
  return out;
}

}  // namespace

int Sbatch(Args args) {
  const int64_t now = Now();
  Result<client::compat::SbatchCommandLine> line = client::compat::ParseSbatchArgs(args, now);
  if (!line) return Error(line.error().message());
  Result<Script> script = ScriptOf(line->request, line->operands);
  if (!script) return Error(script.error().message());
  // 1. The script's #SBATCH lines; the command line wins over them.
  Result<std::vector<client::DirectiveLine>> lines = client::ReadDirectiveLines(
      script->text, line->operands.empty() ? "stdin" : line->operands.front());
  if (!lines) return Error(lines.error().message());
  SbatchRequest directives;
  std::vector<std::string> warnings;
  Status read = client::ReadSbatchLines(*lines, now, directives, warnings);
  if (!read.ok()) return Error(read.message());
  SbatchRequest request = client::compat::MergeSbatch(line->request, directives);
  for (const std::string& ignored : line->request.ignored) {
    warnings.push_back(ignored + " ignored (means nothing to Sluice)");
  }
  // 2. Sluice's submission: flags, script, defaults as Slurm's, the exported environment.
  const std::string user = CurrentUser();
  Result<client::SubmitFlags> flags = client::compat::ToSubmitFlags(request, user);
  if (!flags) return Error(flags.error().message());
  flags->script = script->text;
  flags->command = script->command;
  if (flags->name.empty()) flags->name = script->default_name;
  if (flags->output.empty()) flags->output = flags->array.empty() ? "slurm-%j.out" : "slurm-%A_%a.out";
  const char* env_export = std::getenv("SBATCH_EXPORT");
  const std::string spec = request.export_spec.value_or(env_export != nullptr ? env_export : "ALL");
  Result<client::compat::Environment> env =
      client::compat::ResolveSlurmExport(spec, CallerEnvironment());
  if (!env) return Error(env.error().message());
  flags->env = std::move(*env);
  if (!request.quiet) {
    for (const std::string& warning : warnings) std::cerr << "sbatch: warning: " << warning << "\n";
  }
  // 3. Submit, print the id, and with --wait wait for the job's end.
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Error(rest.error().message());
  Result<Submitted> job = SubmitJob(**rest, *flags);
  if (!job) return Error("Batch job submission failed: " + job.error().message());
  std::cerr.flush();
  if (request.parsable) {
    std::cout << job->id << std::endl;
  } else if (!request.quiet) {
    std::cout << "Submitted batch job " << job->id << std::endl;
  }
  return request.wait ? WaitForJob(**rest, job->id) : 0;
}

}  // namespace sluice::cli::compat
