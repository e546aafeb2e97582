// Interactive jobs (R-LAUNCH-3):
//   sluice run [--pty] [submit flags] -- CMD...   submits CMD as an interactive job, waits for
//     its start and attaches the terminal: its stdin, stdout and stderr are this process's
//     (through the controller, on a pseudo-terminal with --pty: terminal size and Ctrl-C go to
//     the remote side), and the exit is the job's. Ending this process ends the job: Ctrl-C
//     while it waits cancels it; once it runs, a client gone for 30 s gets it killed.
//   sluice alloc [submit flags]   obtains an allocation (an interactive job that holds it and
//     prints its environment) and starts $SHELL here with the job's variables, where `sluice
//     launch`, `srun` and `blaunch` start steps; the allocation ends when the shell exits.
// Exit: the job's (or the shell's) status; 2 for bad flags; 1 when the job ended before it
// started (cancelled, failed to launch).
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/rest_verbs.h"
#include "cli/submit_script.h"
#include "client/step_launch.h"
#include "client/submit_request.h"
#include "wire/step_stream.h"

extern char** environ;

namespace sluice::cli {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

struct RunCommand {
  verbs::Connection connection;
  client::SubmitFlags flags;
  bool pty = false;
  bool alloc = false;
  InteractiveMessages messages;
};

// The holder of `sluice alloc`: prints the job's environment (NUL-separated), then holds the
// allocation until its stdin closes (the shell here exited).
constexpr const char* kAllocHolder = "env -0; printf '\\n'; read -r _ || true";

// Submits; the reply ({"id"}).
Result<json> SubmitInteractive(client::RestClient& rest, const RunCommand& cmd) {
  std::error_code error;
  const std::string submit_dir = std::filesystem::current_path(error).string();
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  client::SubmitFlags flags = cmd.flags;
  if (cmd.alloc) flags.command = {kAllocHolder};
  Result<Submission> submission = ResolveSubmission(flags, true, nullptr, now, CallerEnvironment());
  if (!submission) return submission.error();
  submission->flags.environment = CallerEnvironment();
  submission->flags.umask = CallerUmask();
  Result<json> body = client::BuildSubmitBody(submission->flags, submit_dir, now);
  if (!body) return body.error();
  json interactive = {{"pty", cmd.pty}};
  winsize size{};
  if (cmd.pty && isatty(STDIN_FILENO) && ioctl(STDIN_FILENO, TIOCGWINSZ, &size) == 0) {
    interactive["rows"] = size.ws_row;
    interactive["cols"] = size.ws_col;
  }
  (*body)["interactive"] = interactive;
  return rest.Post("/v1/jobs", *body);
}

// The first host of the job's allocation ("" if it has none yet).
std::string FirstHost(client::RestClient& rest, int64_t id) {
  Result<json> job = rest.Get("/v1/jobs/" + std::to_string(id));
  if (!job) return "";
  const json hosts = job->value("hosts", json::array());
  return hosts.is_array() && !hosts.empty() && hosts[0].is_object() ? hosts[0].value("name", "")
                                                                     : "";
}

std::atomic<bool> interrupted{false};

// Waits until step 0 of the job exists (the job was launched); false when the job ended
// first or the user interrupted.
bool WaitForStart(client::RestClient& rest, int64_t id) {
  while (!interrupted) {
    Result<json> page =
        rest.Get("/v1/jobs/" + std::to_string(id) + "/steps/0/output?after=0&wait_ms=0");
    if (page) return true;
    Result<json> job = rest.Get("/v1/jobs/" + std::to_string(id));
    if (job) {
      const std::string state = job->value("state", "");
      if (state == "DONE" || state == "EXIT" || state == "CANCELLED") {
        std::cerr << "sluice: job " << id << " ended (" << state << ") before it started"
                  << (job->value("message", "").empty() ? "" : ": " + job->value("message", ""))
                  << "\n";
        return false;
      }
    }
    std::this_thread::sleep_for(200ms);
  }
  return false;
}

// Reads step 0's output until the NUL-separated environment and its newline: the variables
// of the job a local shell gets (the job's own: SLUICE_*, SLURM_*, LSB_*).
Result<std::map<std::string, std::string>> ReadAllocEnvironment(client::RestClient& rest,
                                                                int64_t id, int64_t& after) {
  std::string text;
  while (text.empty() || text.back() != '\n') {
    Result<json> page_json = rest.Get("/v1/jobs/" + std::to_string(id) +
                                      "/steps/0/output?after=" + std::to_string(after) +
                                      "&wait_ms=5000");
    if (!page_json) return page_json.error();
    Result<wire::StepPage> page = wire::DecodePage(*page_json);
    if (!page) return page.error();
    for (const wire::StepFrame& f : page->frames) {
      if (f.kind == wire::FrameKind::kStdout) text += f.data;
      if (f.kind == wire::FrameKind::kExit) {
        return Status(StatusCode::kFailedPrecondition, "the allocation ended");
      }
    }
    after = page->next;
  }
  std::map<std::string, std::string> env;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\0', at);
    const std::string entry = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? text.size() : end + 1;
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if ((name.starts_with("SLUICE_") || name.starts_with("SLURM_") || name.starts_with("LSB_")) &&
        name != "SLUICE_HOSTFILE" && name != "LSB_DJOB_HOSTFILE" && name != "SLUICE_SERVER") {
      env[name] = entry.substr(eq + 1);
    }
  }
  return env;
}

// Keeps reading step 0's output (the client is present) until it ends.
void KeepAlive(client::ClientOptions options, int64_t id, int64_t after) {
  client::RestClient rest(options);
  while (true) {
    Result<json> page_json = rest.Get("/v1/jobs/" + std::to_string(id) +
                                      "/steps/0/output?after=" + std::to_string(after) +
                                      "&wait_ms=5000");
    if (!page_json) {
      if (page_json.error().code() == StatusCode::kNotFound) return;
      std::this_thread::sleep_for(500ms);
      continue;
    }
    Result<wire::StepPage> page = wire::DecodePage(*page_json);
    if (!page || page->end) return;
    after = page->next;
  }
}

int RunShell(const std::map<std::string, std::string>& job_env) {
  const char* shell = std::getenv("SHELL");
  const std::string program = shell != nullptr && *shell != '\0' ? shell : "/bin/sh";
  const pid_t pid = fork();
  if (pid == 0) {
    for (const auto& [name, value] : job_env) setenv(name.c_str(), value.c_str(), 1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid < 0) return 1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int RunInteractive(const RunCommand& cmd) {
  Result<client::ClientOptions> options = client::ResolveClientOptions(
      cmd.connection.server, cmd.connection.token, cmd.connection.ca_file);
  if (!options) {
    std::cerr << "error: " << options.error().message() << "\n";
    return 2;
  }
  client::RestClient rest(*options);
  Result<json> submitted = SubmitInteractive(rest, cmd);
  if (!submitted) {
    std::cerr << "error: " << submitted.error().message() << "\n";
    return submitted.error().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  const int64_t job = submitted->value("id", int64_t{0});
  // Ctrl-C while waiting cancels the job (as srun does before the start).
  signal(SIGINT, [](int) { interrupted = true; });
  if (cmd.messages.submitted) {
    std::string queue = cmd.flags.queue;
    if (queue.empty()) {
      Result<json> record = rest.Get("/v1/jobs/" + std::to_string(job));
      if (record) queue = record->value("queue", "");
    }
    cmd.messages.submitted(job, queue);
  } else {
    std::cerr << "sluice: job " << job << " submitted; waiting for it to start\n";
  }
  if (!WaitForStart(rest, job)) {
    if (interrupted) (void)rest.Post("/v1/jobs/" + std::to_string(job) + "/cancel", json::object());
    return 1;
  }
  signal(SIGINT, SIG_DFL);
  if (cmd.messages.started) cmd.messages.started(FirstHost(rest, job));
  client::StepLaunch launch{.client = *options, .job = job, .pty = cmd.pty, .program = "sluice"};
  if (!cmd.alloc) return client::RelayJobStreams(launch);

  int64_t after = 0;
  Result<std::map<std::string, std::string>> env = ReadAllocEnvironment(rest, job, after);
  if (!env) {
    std::cerr << "sluice alloc: " << env.error().message() << "\n";
    return 1;
  }
  std::cerr << "sluice alloc: job " << job << " holds " << (*env)["SLUICE_HOSTS"]
            << "; exit the shell to end it\n";
  std::thread(KeepAlive, *options, job, after).detach();
  const int status = RunShell(*env);
  (void)rest.Post("/v1/jobs/" + std::to_string(job) + "/steps/0/input",
                  json{{"frames", wire::EncodeFrames({wire::StepFrame{.kind = wire::FrameKind::kStdinEof}})}});
  return status;
}


}  // namespace

int RunInteractiveJob(const client::SubmitFlags& flags, bool pty, bool alloc,
                      const InteractiveMessages& messages) {
  RunCommand cmd{.flags = flags, .pty = pty, .alloc = alloc, .messages = messages};
  return RunInteractive(cmd);
}

void RegisterRunCommands(CLI::App& app, int& exit_code) {
  CLI::App* run = app.add_subcommand("run", "run a command as an interactive job (srun, bsub -Is)");
  auto r = std::make_shared<RunCommand>();
  verbs::AddConnectionFlags(run, r->connection);
  AddJobShapeFlags(run, r->flags);
  run->add_flag("--pty", r->pty, "run on a pseudo-terminal (an interactive shell: --pty -- bash -i)");
  run->add_option("command", r->flags.command, "the command, after --")->required();
  run->callback([r, &exit_code] { exit_code = RunInteractive(*r); });

  CLI::App* alloc = app.add_subcommand(
      "alloc", "obtain an allocation and start a shell here with it (salloc)");
  auto a = std::make_shared<RunCommand>();
  a->alloc = true;
  verbs::AddConnectionFlags(alloc, a->connection);
  AddJobShapeFlags(alloc, a->flags);
  alloc->callback([a, &exit_code] { exit_code = RunInteractive(*a); });
}

}  // namespace sluice::cli
