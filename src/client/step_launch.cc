#include "client/step_launch.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "wire/host_slots.h"
#include "wire/step_stream.h"

namespace sluice::client {
namespace {

using nlohmann::json;

struct Running {
  std::string host;
  std::string path;  // /v1/jobs/J/steps/N
  int status = kStepLaunchFailed;
  bool done = false;
};

std::mutex out_mu;  // whole frames to stdout/stderr, not interleaved bytes

void WriteAll(int fd, const std::string& bytes) {
  std::lock_guard lock(out_mu);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void Say(const std::string& program, const std::string& text) {
  WriteAll(STDERR_FILENO, program + ": " + text + "\n");
}

// Follows a step's output until its exit; returns the exit status.
int FollowOutput(RestClient& rest, const Running& step, const std::string& program) {
  int64_t after = 0;
  int failures = 0;
  while (true) {
    Result<json> page_json =
        rest.Get(step.path + "/output?after=" + std::to_string(after) + "&wait_ms=5000");
    if (!page_json) {
      if (page_json.error().code() == StatusCode::kUnavailable && ++failures < 60) continue;
      Say(program, step.host + ": " + page_json.error().message());
      return kStepLaunchFailed;
    }
    failures = 0;
    Result<wire::StepPage> page = wire::DecodePage(*page_json);
    if (!page) {
      Say(program, "bad answer from the controller: " + page.error().message());
      return kStepLaunchFailed;
    }
    for (const wire::StepFrame& frame : page->frames) {
      if (frame.kind == wire::FrameKind::kStdout) WriteAll(STDOUT_FILENO, frame.data);
      if (frame.kind == wire::FrameKind::kStderr) WriteAll(STDERR_FILENO, frame.data);
      if (frame.kind == wire::FrameKind::kExit) {
        if (!frame.exit.error.empty()) Say(program, step.host + ": " + frame.exit.error);
        return frame.exit.status;
      }
    }
    after = page->next;
    if (page->end) return kStepLaunchFailed;
  }
}

void SendFrames(RestClient& rest, const std::vector<Running>& steps,
                const std::vector<wire::StepFrame>& frames, bool first_only) {
  const json body = {{"frames", wire::EncodeFrames(frames)}};
  for (const Running& step : steps) {
    if (!step.done) {
      for (int attempt = 0; attempt < 100; ++attempt) {
        Result<json> sent = rest.Post(step.path + "/input", body);
        if (sent || sent.error().code() != StatusCode::kResourceExhausted) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    if (first_only) break;
  }
}

// Our stdin to the first step, then EOF.
void ForwardStdin(ClientOptions options, std::vector<Running> steps) {
  RestClient rest(options);
  std::string buffer(64 * 1024, '\0');
  while (true) {
    const ssize_t n = read(STDIN_FILENO, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    SendFrames(rest, steps,
               {wire::StepFrame::Data(wire::FrameKind::kStdin, buffer.substr(0, n))}, true);
  }
  SendFrames(rest, steps, {wire::StepFrame{.kind = wire::FrameKind::kStdinEof}}, true);
}

// INT, TERM, HUP and the terminal's size to the steps; SIGUSR2 ends it.
void ForwardSignals(ClientOptions options, std::vector<Running> steps, sigset_t /*blocked*/) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGUSR2}) sigaddset(&set, s);
  RestClient rest(options);
  int forwarded = 0;
  while (true) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0) continue;
    if (signal == SIGUSR2) return;
    if (signal == SIGWINCH) {
      winsize size{};
      if (ioctl(STDIN_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0) {
        SendFrames(rest, steps,
                   {wire::StepFrame{.kind = wire::FrameKind::kResize,
                                    .rows = size.ws_row,
                                    .cols = size.ws_col}},
                   true);
      }
      continue;
    }
    if (++forwarded > 1 && signal != SIGHUP) _exit(128 + signal);
    SendFrames(rest, steps, {wire::StepFrame{.kind = wire::FrameKind::kSignal, .signal = signal}},
               false);
  }
}

}  // namespace

Result<int64_t> CurrentJob(std::string& credential) {
  int64_t job = 0;
  auto number = [&job](const char* text) {
    const char* end = text + std::strlen(text);
    auto [at, error] = std::from_chars(text, end, job);
    return error == std::errc() && job > 0 && (at == end || *at == '.');
  };
  if (const char* c = std::getenv("SLUICE_JOB_CREDENTIAL"); c != nullptr && number(c)) {
    credential = c;
    return job;
  }
  if (const char* id = std::getenv("SLUICE_JOB_ID"); id != nullptr && number(id)) return job;
  return Status(StatusCode::kFailedPrecondition,
                "runs only inside a job (SLUICE_JOB_ID is not set); outside one, submit with "
                "`sluice submit`");
}

Result<ClientOptions> StepClientOptions(const std::string& server, const std::string& token,
                                        const std::string& credential) {
  Result<ClientOptions> options = ResolveClientOptions(server, token);
  if (!options) return options.error();
  if (!credential.empty() && token.empty()) options->authorization = "Job " + credential;
  return options;
}

std::vector<std::pair<std::string, int>> AllocationHosts() {
  const char* text = std::getenv("SLUICE_HOSTS");
  return wire::ParseHostSlots(text != nullptr ? text : "");
}

std::string ShellQuote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%_+=:,./-", c) != nullptr;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

// Relays `steps` (opened) until every one ended; see the header.
int Relay(const StepLaunch& launch, std::vector<Running> steps, bool terminal) {
  termios saved{};
  const bool raw = terminal && tcgetattr(STDIN_FILENO, &saved) == 0;
  if (raw) {
    termios modes = saved;
    cfmakeraw(&modes);
    tcsetattr(STDIN_FILENO, TCSANOW, &modes);
  }
  sigset_t set;
  pthread_sigmask(SIG_BLOCK, nullptr, &set);
  std::thread signals(ForwardSignals, launch.client, steps, set);
  std::thread(ForwardStdin, launch.client, steps).detach();  // may block in read(); ends with us
  std::vector<std::thread> followers;
  std::atomic<bool> killed_others{false};
  for (size_t i = 0; i < steps.size(); ++i) {
    followers.emplace_back([&, i] {
      RestClient own(launch.client);
      steps[i].status = FollowOutput(own, steps[i], launch.program);
      steps[i].done = true;
      if (launch.kill_on_bad_exit && steps[i].status != 0 && !killed_others.exchange(true)) {
        SendFrames(own, steps, {wire::StepFrame{.kind = wire::FrameKind::kSignal, .signal = SIGKILL}},
                   false);
      }
    });
  }
  for (std::thread& t : followers) t.join();
  if (raw) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
  pthread_kill(signals.native_handle(), SIGUSR2);
  signals.join();
  for (const Running& step : steps) {
    if (step.status != 0) return step.status;
  }
  return 0;
}

// Blocks the signals the relay forwards, for every thread started after (sigwait takes them).
void BlockForwardedSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGUSR2}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool TerminalSize(bool pty, winsize& size) {
  return pty && isatty(STDIN_FILENO) && ioctl(STDIN_FILENO, TIOCGWINSZ, &size) == 0;
}

}  // namespace

int RunSteps(const StepLaunch& launch) {
  winsize size{};
  const bool terminal = TerminalSize(launch.pty, size);
  BlockForwardedSignals();
  RestClient rest(launch.client);
  std::vector<Running> steps;
  const std::string base = "/v1/jobs/" + std::to_string(launch.job) + "/steps";
  for (const StepTask& task : launch.tasks) {
    json body = {{"host", task.host}, {"command", launch.command}, {"task", task.task},
                 {"pty", launch.pty}};
    if (!task.env.empty()) body["env"] = task.env;
    if (terminal) {
      body["rows"] = size.ws_row;
      body["cols"] = size.ws_col;
    }
    Result<json> opened = rest.Post(base, body);
    if (!opened) {
      Say(launch.program, task.host + ": " + opened.error().message());
      if (!steps.empty()) {  // those already started must not outlive this
        SendFrames(rest, steps, {wire::StepFrame{.kind = wire::FrameKind::kSignal, .signal = SIGKILL}}, false);
      }
      return opened.error().code() == StatusCode::kFailedPrecondition ||
                     opened.error().code() == StatusCode::kInvalidArgument
                 ? 2
                 : kStepLaunchFailed;
    }
    steps.push_back({.host = task.host,
                     .path = base + "/" + std::to_string(opened->value("step", int64_t{0}))});
  }
  return Relay(launch, std::move(steps), terminal);
}

int RelayJobStreams(const StepLaunch& launch) {
  winsize size{};
  const bool terminal = TerminalSize(launch.pty, size);
  BlockForwardedSignals();
  return Relay(launch, {Running{.host = "job " + std::to_string(launch.job),
                                .path = "/v1/jobs/" + std::to_string(launch.job) + "/steps/0"}},
               terminal);
}

}  // namespace sluice::client
