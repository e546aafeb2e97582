// bsub (R-COMPAT-1): `bsub [OPTIONS] COMMAND [ARGS]` or `bsub [OPTIONS] < SCRIPT` (the
// script's #BSUB lines read as LSF reads a spooled script); prints
// `Job <N> is submitted to queue <Q>.` (`default queue` without -q), and with -K waits for
// the job and exits with its exit code. -I, -Ip and -Is run it as an interactive job (`sluice
// run`, R-LAUNCH-3; on a pseudo-terminal for -Ip/-Is) after LSF's `<<Waiting for dispatch
// ...>>` and `<<Starting on HOST>>`, and exit with its exit code.
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/compat/compat_commands.h"
#include "cli/compat/job_lookup.h"
#include "cli/compat/submission.h"
#include "cli/job_wait.h"
#include "cli/submit_script.h"
#include "client/compat/bsub_request.h"
#include "client/directives.h"

namespace sluice::cli::compat {
namespace {

int Error(const std::string& message) {
  std::cerr << message << ". Job not submitted.\n";
  return kLsfFailure;
}

}  // namespace

int Bsub(Args args) {
  const int64_t now = Now();
  Result<client::compat::BsubCommandLine> line = client::compat::ParseBsubArgs(args, now);
  if (!line) return Error(line.error().message());
  client::compat::BsubRequest request = line->request;
  std::vector<std::string> warnings;
  client::SubmitFlags script;
  // 1. No command: the script comes from standard input, with its #BSUB lines.
  if (line->operands.empty()) {
    if (isatty(STDIN_FILENO)) return Error("bsub: a command is required (or a script on stdin)");
    Result<std::string> text = ReadJobScript("");
    if (!text) return Error(text.error().message());
    Result<std::vector<client::DirectiveLine>> lines = client::ReadDirectiveLines(*text, "stdin");
    if (!lines) return Error(lines.error().message());
    client::compat::BsubRequest directives;
    Status read = client::ReadBsubLines(*lines, now, directives, warnings);
    if (!read.ok()) return Error(read.message());
    request = client::compat::MergeBsub(line->request, directives);
    script.script = std::move(*text);
    script.command = {"stdin"};
  }
  for (const std::string& ignored : line->request.ignored) {
    warnings.push_back(ignored + " ignored (means nothing to Sluice)");
  }
  // 2. Sluice's submission: the flags, the command (one word: a shell command, as LSF runs
  // it) and the caller's environment, which LSF copies by default.
  Result<client::SubmitFlags> flags = client::compat::ToSubmitFlags(request);
  if (!flags) return Error(flags.error().message());
  if (script.script) {
    flags->script = std::move(script.script);
    flags->command = std::move(script.command);
  } else {
    std::string command;
    for (const std::string& word : line->operands) command += (command.empty() ? "" : " ") + word;
    flags->command = {command};
  }
  if (flags->name.empty()) flags->name = flags->command.front();
  Result<client::compat::Environment> env =
      client::compat::ResolveLsfEnv(request.env_spec, CallerEnvironment());
  if (!env) return Error(env.error().message());
  flags->env = std::move(*env);
  for (const std::string& warning : warnings) std::cerr << "bsub: warning: " << warning << "\n";
  const auto submitted_line = [&](int64_t id, const std::string& queue) {
    std::cout << "Job <" << id << "> is submitted to "
              << (request.queue ? "queue <" : "default queue <") << queue << ">.\n";
  };
  // 3. Interactive: submitted, waited for and attached as `sluice run`.
  if (request.interactive != client::compat::BsubInteractive::kNo) {
    const InteractiveMessages lsf{
        .submitted =
            [&](int64_t id, const std::string& queue) {
              submitted_line(id, queue);
              std::cout << "<<Waiting for dispatch ...>>\n" << std::flush;
            },
        .started =
            [](const std::string& host) { std::cout << "<<Starting on " << host << ">>\n" << std::flush; }};
    return RunInteractiveJob(*flags, request.interactive == client::compat::BsubInteractive::kPty,
                             false, lsf);
  }
  // 4. Submit; with -K wait.
  Result<std::unique_ptr<client::RestClient>> rest = Connect();
  if (!rest) return Error(rest.error().message());
  Result<Submitted> job = SubmitJob(**rest, *flags);
  if (!job) return Error(job.error().message());
  submitted_line(job->id, job->queue);
  std::cout.flush();
  return request.wait ? WaitForJob(**rest, job->id) : 0;
}

}  // namespace sluice::cli::compat
