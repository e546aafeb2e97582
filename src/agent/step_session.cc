#include "agent/step_session.h"

#include <errno.h>
#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <cstring>
#include <vector>

#include "agent/controller_client.h"
#include "agent/protocol.h"
#include "wire/protocol_version.h"

namespace sluice::agent {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr size_t kBatchBytes = 64 * 1024;
constexpr auto kBatchDelay = 20ms;
// How long an exit is offered to an unreachable controller before the session gives up.
constexpr auto kExitDeadline = 10min;

std::string StepPath(const std::string& host, int64_t job, int64_t step, const char* what) {
  return "/v1/agents/" + host + "/steps/" + std::to_string(job) + "/" + std::to_string(step) +
         "/" + what;
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Writes all of `bytes` (a blocking descriptor); false once it fails (the step closed it).
bool WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

class StepSession {
 public:
  StepSession(wire::StepOrder order, std::string host, EndpointFn endpoint)
      : order_(std::move(order)), host_(std::move(host)), endpoint_(std::move(endpoint)) {}

  ~StepSession() {
    Kill();
    Finish(wire::StepExit{.status = 137, .signal = 9});  // unblocks an output thread waiting
    if (output_.joinable()) output_.join();
    if (input_.joinable()) input_.join();
    CloseFd(stdin_);
    CloseFd(master_);
  }

  // Starts the process with `start` and the threads; a failure to start is reported as the
  // step's exit. `owns_process`: the session reaps the process (a step); else the runner does
  // (an interactive job's main process), and Finish gives its exit.
  void Start(const StartFn& start, bool owns_process) {
    owns_process_ = owns_process;
    StepStdio stdio;
    std::vector<int> child_ends;
    Status opened = OpenStreams(stdio, child_ends);
    Result<pid_t> pid = opened.ok() ? start(stdio) : Result<pid_t>(opened);
    for (int fd : child_ends) close(fd);
    if (!pid) {
      spdlog::warn("agent {}: step {} failed to start: {}", host_,
                   wire::StepId(order_.job, order_.step), pid.error().message());
      CloseFd(stdin_);
      CloseFd(stdout_);
      CloseFd(stderr_);
      CloseFd(master_);
      start_error_ = pid.error().message();
    } else {
      pid_ = *pid;
      if (master_ >= 0) input_terminal_ = fcntl(master_, F_DUPFD_CLOEXEC, 0);
      spdlog::info("agent {}: step {} started (pid {})", host_,
                   wire::StepId(order_.job, order_.step), pid_);
    }
    output_ = std::thread([this] { PumpOutput(); });
    if (pid_ > 0) input_ = std::thread([this] { PumpInput(); });
  }

  void Kill() {
    killed_ = true;
    if (pid_ > 0 && !reaped_) kill(-pid_, SIGKILL);
  }

  // A user's signal to its session (issue 47); not a kill: its exit stays its own. Not to an
  // interactive job's own process: the runner's (JobRunner::Signal) already.
  bool Signal(int signal) {
    if (pid_ <= 0 || reaped_ || !owns_process_) return false;
    return kill(-pid_, signal) == 0;
  }

  // The exit of a process the runner reaped (an interactive job's).
  void Finish(const wire::StepExit& exit) {
    std::lock_guard lock(exit_mu_);
    exit_ = exit;
    exit_cv_.notify_all();
  }

  bool finished() const { return output_done_ && input_done_; }
  int64_t job() const { return order_.job; }

 private:
  Status OpenStreams(StepStdio& stdio, std::vector<int>& child_ends) {
    if (order_.pty) {
      int slave = -1;
      winsize size{.ws_row = static_cast<unsigned short>(order_.rows > 0 ? order_.rows : 24),
                   .ws_col = static_cast<unsigned short>(order_.cols > 0 ? order_.cols : 80),
                   .ws_xpixel = 0,
                   .ws_ypixel = 0};
      if (openpty(&master_, &slave, nullptr, nullptr, &size) != 0) {
        return Status(StatusCode::kUnavailable, std::string("openpty: ") + std::strerror(errno));
      }
      fcntl(master_, F_SETFD, FD_CLOEXEC);
      fcntl(slave, F_SETFD, FD_CLOEXEC);  // the child's dup2 onto 0, 1 and 2 clears it
      stdio.fds[0] = stdio.fds[1] = stdio.fds[2] = slave;
      stdio.tty = true;
      child_ends.push_back(slave);
      return Status::Ok();
    }
    int pipes[3][2];
    for (int i = 0; i < 3; ++i) {
      if (pipe2(pipes[i], O_CLOEXEC) != 0) {
        const int error = errno;
        for (int k = 0; k < i; ++k) {
          close(pipes[k][0]);
          close(pipes[k][1]);
        }
        return Status(StatusCode::kUnavailable, std::string("pipe: ") + std::strerror(error));
      }
    }
    stdio.fds[0] = pipes[0][0];
    stdin_ = pipes[0][1];
    stdio.fds[1] = pipes[1][1];
    stdout_ = pipes[1][0];
    stdio.fds[2] = pipes[2][1];
    stderr_ = pipes[2][0];
    child_ends = {pipes[0][0], pipes[1][1], pipes[2][1]};
    return Status::Ok();
  }

  // One request; the status (0: no answer) and the parsed body.
  int Request(bool post, const std::string& path, const json& body, json& reply,
              std::chrono::milliseconds read_timeout) {
    Result<StepEndpoint> endpoint = endpoint_();
    if (!endpoint) return 0;
    if (!client_[post] || client_url_[post] != endpoint->url) {
      client_[post] = NewControllerClient(endpoint->url, endpoint->ca_file,
                                          {.connect = 2s, .read = read_timeout, .write = 5s});
      client_url_[post] = endpoint->url;
    }
    client_[post]->set_read_timeout(read_timeout);
    const httplib::Headers headers = {
        {"Authorization", endpoint->authorization},
        {wire::kProtocolHeader, wire::ToString(wire::kProtocolVersion)}};
    httplib::Result result =
        post ? client_[post]->Post(path.c_str(), headers, body.dump(), "application/json")
             : client_[post]->Get(path.c_str(), headers);
    if (!result) {
      client_[post].reset();
      return 0;
    }
    reply = json::parse(result->body, nullptr, false);
    return result->status;
  }

  // Sends frames until the controller took them. False: the step is unknown there (its client
  // is gone) or the exit could not be delivered in time.
  bool Send(const std::vector<wire::StepFrame>& frames) {
    const json body = {{"frames", wire::EncodeFrames(frames)}};
    const auto deadline = std::chrono::steady_clock::now() + kExitDeadline;
    auto backoff = 20ms;
    while (std::chrono::steady_clock::now() < deadline) {
      json reply;
      const int status =
          Request(true, StepPath(host_, order_.job, order_.step, "output"), body, reply, 15s);
      if (status == 200 && reply.is_object() && reply.value("accepted", false)) return true;
      if (status == 404 || status == 403 || status == 400) return false;
      std::this_thread::sleep_for(status == 200 ? 20ms : backoff);  // full buffer, or no answer
      if (status != 200) backoff = std::min<std::chrono::milliseconds>(backoff * 2, 1s);
    }
    return false;
  }

  void PumpOutput() {
    const bool deliverable = RelayOutput();
    wire::StepFrame exit{.kind = wire::FrameKind::kExit, .exit = AwaitExit()};
    spdlog::info("agent {}: step {} ended with status {}", host_,
                 wire::StepId(order_.job, order_.step), exit.exit.status);
    if (deliverable) Send({exit});
    output_done_ = true;
  }

  // Sends what the step writes, in batches (at most kBatchBytes, held at most kBatchDelay),
  // until every holder of its stdout and stderr (or terminal) closed them. False once the
  // controller no longer takes its output (its client is gone): the step is then killed.
  bool RelayOutput() {
    std::vector<wire::StepFrame> batch;
    size_t bytes = 0;
    bool deliverable = true;
    auto flush = [&] {
      if (!batch.empty() && deliverable && !Send(batch)) {
        deliverable = false;
        Kill();  // nobody reads it any more
      }
      batch.clear();
      bytes = 0;
    };
    std::vector<pollfd> fds;
    for (int fd : {master_, stdout_, stderr_}) {
      if (fd >= 0) fds.push_back({.fd = fd, .events = POLLIN, .revents = 0});
    }
    std::vector<char> buffer(kBatchBytes);
    auto last_flush = std::chrono::steady_clock::now();
    while (!fds.empty()) {
      const int ready = poll(fds.data(), fds.size(), batch.empty() ? 1000 : 20);
      if (ready < 0 && errno != EINTR) break;
      for (size_t i = 0; i < fds.size();) {
        if (fds[i].revents == 0) {
          ++i;
          continue;
        }
        const ssize_t n = read(fds[i].fd, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {  // EOF, or EIO: every holder of the terminal's slave side closed it
          close(fds[i].fd);
          if (fds[i].fd == master_) master_ = -1;
          fds.erase(fds.begin() + static_cast<ptrdiff_t>(i));
          continue;
        }
        const wire::FrameKind kind =
            fds[i].fd == stderr_ ? wire::FrameKind::kStderr : wire::FrameKind::kStdout;
        if (!batch.empty() && batch.back().kind == kind) {
          batch.back().data.append(buffer.data(), static_cast<size_t>(n));
        } else {
          batch.push_back(wire::StepFrame::Data(kind, std::string(buffer.data(), n)));
        }
        bytes += static_cast<size_t>(n);
        fds[i].revents = 0;
        ++i;
      }
      const auto now = std::chrono::steady_clock::now();
      if (bytes >= kBatchBytes || (!batch.empty() && (ready == 0 || now - last_flush >= kBatchDelay))) {
        flush();
        last_flush = now;
      }
    }
    stdout_ = stderr_ = -1;
    flush();
    return deliverable;
  }

  // How the step ended: reaped here, given by the runner (an interactive job's), or its
  // failure to start.
  wire::StepExit AwaitExit() {
    if (pid_ > 0 && !owns_process_) {  // the agent gives it with Finish
      std::unique_lock lock(exit_mu_);
      exit_cv_.wait(lock, [&] { return exit_.has_value(); });
      reaped_ = true;
      return *exit_;
    }
    if (pid_ <= 0) return wire::StepExit{.status = 255, .error = start_error_};
    int status = 0;
    rusage usage{};
    while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    return StepExitOf(ExitOfWaitStatus(order_.job, status, usage));
  }

  void PumpInput() {
    int64_t after = 0;
    const int terminal_copy = input_terminal_;  // the output thread closes master_ at EOF
    while (!output_done_ && !killed_) {
      json reply;
      const int status = Request(
          false,
          StepPath(host_, order_.job, order_.step, "input") + "?after=" + std::to_string(after) +
              "&wait_ms=2000",
          json(), reply, 10s);
      if (status == 404 || status == 403) break;
      if (status != 200) {
        std::this_thread::sleep_for(200ms);
        continue;
      }
      Result<wire::StepPage> page = wire::DecodePage(reply);
      if (!page) break;
      for (const wire::StepFrame& frame : page->frames) Deliver(frame, terminal_copy);
      after = page->next;
      if (page->end) break;
    }
    CloseFd(input_terminal_);
    input_done_ = true;
  }

  void Deliver(const wire::StepFrame& frame, int terminal) {
    switch (frame.kind) {
      case wire::FrameKind::kStdin:
        if (terminal >= 0) {
          WriteAll(terminal, frame.data);
        } else if (stdin_ >= 0 && !WriteAll(stdin_, frame.data)) {
          CloseFd(stdin_);
        }
        break;
      case wire::FrameKind::kStdinEof:
        if (terminal >= 0) {
          termios modes{};
          const char eof = tcgetattr(terminal, &modes) == 0 ? static_cast<char>(modes.c_cc[VEOF]) : '\x04';
          WriteAll(terminal, std::string(1, eof));
        } else {
          CloseFd(stdin_);
        }
        break;
      case wire::FrameKind::kSignal:
        if (!reaped_) kill(-pid_, frame.signal);
        break;
      case wire::FrameKind::kResize:
        if (terminal >= 0) {
          winsize size{.ws_row = static_cast<unsigned short>(frame.rows),
                       .ws_col = static_cast<unsigned short>(frame.cols),
                       .ws_xpixel = 0,
                       .ws_ypixel = 0};
          ioctl(terminal, TIOCSWINSZ, &size);
        }
        break;
      default:
        break;
    }
  }

  bool owns_process_ = true;
  std::mutex exit_mu_;
  std::condition_variable exit_cv_;
  std::optional<wire::StepExit> exit_;
  const wire::StepOrder order_;
  const std::string host_;
  const EndpointFn endpoint_;
  pid_t pid_ = -1;
  std::string start_error_;
  int stdin_ = -1;   // our end of its stdin pipe
  int stdout_ = -1;  // our ends of its stdout and stderr pipes
  int stderr_ = -1;
  int master_ = -1;  // the terminal's master side (--pty), read by the output thread
  int input_terminal_ = -1;  // a copy the input thread writes to
  std::atomic<bool> killed_{false};
  std::atomic<bool> reaped_{false};
  std::atomic<bool> output_done_{false};
  std::atomic<bool> input_done_{true};
  std::unique_ptr<httplib::Client> client_[2];  // [0] the input thread's, [1] the output's
  std::string client_url_[2];
  std::thread output_;
  std::thread input_;

  friend class StepSessions;
};

StepSessions::StepSessions(std::string host, EndpointFn endpoint)
    : host_(std::move(host)), endpoint_(std::move(endpoint)) {}

StepSessions::~StepSessions() { sessions_.clear(); }

void StepSessions::Start(const wire::StepOrder& order, JobRunner& runner) {
  StepSpec spec{.job = order.job,
                .command = order.command,
                .env = order.env,
                .account = order.account,
                .cwd = order.cwd,
                .umask = order.umask,
                .mem_limit_mb = order.mem_limit_mb,
                .cpu_limit = order.cpu_limit,
                .gpus = order.gpus};
  Open(order, [&](const StepStdio& stdio) { return runner.StartStep(spec, stdio); }, true);
}

void StepSessions::Refuse(const wire::StepOrder& order, const std::string& why) {
  Open(order, [&](const StepStdio&) -> Result<pid_t> { return Status(StatusCode::kUnavailable, why); },
       true);
}

Status StepSessions::Attach(int64_t job, bool pty, int rows, int cols, const StartFn& start) {
  const wire::StepOrder order{.job = job, .step = 0, .pty = pty, .rows = rows, .cols = cols};
  Status started = Status::Ok();
  Open(order,
       [&](const StepStdio& stdio) -> Result<pid_t> {
         Result<pid_t> pid = start(stdio);
         if (!pid) started = pid.error();
         return pid;
       },
       false);
  return started;
}

void StepSessions::Open(const wire::StepOrder& order, const StartFn& start, bool owns_process) {
  const std::pair key{order.job, order.step};
  if (sessions_.contains(key)) return;  // a repeated order
  auto session = std::make_unique<StepSession>(order, host_, endpoint_);
  session->input_done_ = false;
  session->Start(start, owns_process);
  if (session->pid_ <= 0) session->input_done_ = true;
  sessions_.emplace(key, std::move(session));
}

void StepSessions::JobEnded(int64_t job, const wire::StepExit& exit) {
  auto it = sessions_.find({job, 0});
  if (it != sessions_.end()) it->second->Finish(exit);
}

void StepSessions::Kill(const wire::StepKill& kill, JobRunner& runner) {
  for (auto& [key, session] : sessions_) {
    if (key.first == kill.job && (kill.step == 0 || key.second == kill.step)) session->Kill();
  }
  if (kill.step == 0) runner.EndSteps(kill.job);  // and whatever its steps left behind
}

bool StepSessions::Signal(int64_t job, int signal, const JobRunner& runner) {
  if (runner.StepsContained(job)) return false;
  bool any = false;
  for (auto& [key, session] : sessions_) {
    if (key.first == job) any = session->Signal(signal) || any;
  }
  return any;
}

void StepSessions::KillAll(JobRunner& runner) {
  std::set<int64_t> jobs;
  for (auto& [key, session] : sessions_) {
    session->Kill();
    jobs.insert(key.first);
  }
  for (int64_t job : jobs) runner.EndSteps(job);
}

std::set<int64_t> StepSessions::Reap() {
  std::set<int64_t> jobs;
  std::erase_if(sessions_, [&jobs](const auto& entry) {
    if (!entry.second->finished()) return false;
    jobs.insert(entry.first.first);
    return true;
  });
  return jobs;
}

bool StepSessions::HasJob(int64_t job) const {
  auto it = sessions_.lower_bound({job, 0});  // steps are numbered from 0
  return it != sessions_.end() && it->first.first == job;
}

}  // namespace sluice::agent
