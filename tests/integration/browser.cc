#include "integration/browser.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

namespace sluice::integration {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

std::string Base64Decode(const std::string& in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  int bits = 0;
  int acc = 0;
  for (char c : in) {
    const int v = value(c);
    if (v < 0) continue;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

// The text of a console call's arguments.
std::string ConsoleText(const json& args) {
  std::string text;
  for (const json& arg : args) {
    if (!text.empty()) text += ' ';
    if (arg.contains("value")) {
      text += arg["value"].is_string() ? arg["value"].get<std::string>() : arg["value"].dump();
    } else {
      text += arg.value("description", arg.value("type", "?"));
    }
  }
  return text;
}

}  // namespace

std::optional<std::string> Browser::Find() {
  if (const char* env = std::getenv("SLUICE_CHROMIUM"); env != nullptr && *env != '\0') {
    return access(env, X_OK) == 0 ? std::optional<std::string>(env) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    size_t at = 0;
    while (at <= dirs.size()) {
      const size_t colon = std::min(dirs.find(':', at), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(at, colon - at)) / name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
      at = colon + 1;
    }
  }
  return std::nullopt;
}

Browser::Browser(const std::string& binary, int width, int height) {
  signal(SIGPIPE, SIG_IGN);  // a dead browser is an error reply, not a killed test
  std::vector<std::string> argv = {
      binary,
      "--headless=new",
      "--remote-debugging-pipe",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--disable-extensions",
      "--disable-background-networking",
      "--disable-sync",
      "--disable-component-update",
      "--disable-default-apps",
      "--mute-audio",
      "--hide-scrollbars",
      "--user-data-dir=" + (profile_.path() / "profile").string(),
      "--window-size=" + std::to_string(width) + "," + std::to_string(height),
      "about:blank"};
  if (geteuid() == 0) argv.insert(argv.begin() + 1, "--no-sandbox");  // root: no sandbox
  std::vector<char*> args;
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  int commands[2];
  int replies[2];
  if (pipe2(commands, O_CLOEXEC) != 0 || pipe2(replies, O_CLOEXEC) != 0) {
    error_ = "pipe failed";
    return;
  }
  const std::string log = (profile_.path() / "chromium.log").string();
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);  // its own group: the renderer and GPU children die with it
    const int in = fcntl(commands[0], F_DUPFD, 10);
    const int out = fcntl(replies[1], F_DUPFD, 10);
    dup2(in, 3);
    dup2(out, 4);
    const int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  close(commands[0]);
  close(replies[1]);
  if (log_fd >= 0) close(log_fd);
  to_browser_ = commands[1];
  from_browser_ = replies[0];
  if (pid_ < 0) {
    error_ = "fork failed";
    return;
  }
  setpgid(pid_, pid_);
  // The first reply comes once the browser has started: it may take long (kStartTimeout).
  json target = Send("Target.createTarget", {{"url", "about:blank"}}, true, kStartTimeout);
  if (!target.is_object()) {
    error_ = "chromium did not answer on its pipe: " + error_ +
             "; its log: " + testing::ReadFile(log).value_or("").substr(0, 2000);
    return;
  }
  json attached = Send("Target.attachToTarget",
                       {{"targetId", target.value("targetId", "")}, {"flatten", true}}, true);
  session_ = attached.is_object() ? attached.value("sessionId", "") : "";
  if (session_.empty()) {
    error_ = "cannot attach to the page: " + error_;
    return;
  }
  for (const char* domain : {"Page.enable", "Runtime.enable", "Log.enable"}) Send(domain);
  Resize(width, height);
}

Browser::~Browser() {
  if (to_browser_ >= 0) close(to_browser_);
  if (from_browser_ >= 0) close(from_browser_);
  if (pid_ <= 0) return;
  kill(-pid_, SIGTERM);
  int status = 0;
  const auto deadline = Clock::now() + 3s;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  kill(-pid_, SIGKILL);  // any child left in its group
}

bool Browser::Exited() const {
  siginfo_t info{};
  return pid_ > 0 && waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;  // left to the destructor to reap
}

bool Browser::Write(const json& message) {
  const std::string text = message.dump() + '\0';
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(to_browser_, text.data() + done, text.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

json Browser::Read(Clock::time_point deadline) {
  while (true) {
    const size_t end = buffer_.find('\0');
    if (end != std::string::npos) {
      json message = json::parse(buffer_.substr(0, end), nullptr, false);
      buffer_.erase(0, end + 1);
      if (!message.is_discarded()) return message;
      continue;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return nullptr;
    pollfd fd{.fd = from_browser_, .events = POLLIN, .revents = 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[65536];
    const ssize_t n = read(from_browser_, chunk, sizeof chunk);
    if (n <= 0) return nullptr;  // the browser exited
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

void Browser::OnEvent(const json& message) {
  const std::string method = message.value("method", "");
  const json& params = message.contains("params") ? message["params"] : json::object();
  if (method == "Page.loadEventFired") loaded_ = true;
  if (method == "Runtime.exceptionThrown") {
    const json& d = params.value("exceptionDetails", json::object());
    errors_.push_back("exception: " + d.value("text", "") + " " +
                      d.value("exception", json::object()).value("description", ""));
  }
  if (method == "Runtime.consoleAPICalled") {
    const std::string type = params.value("type", "");
    if (type == "error" || type == "assert") {
      errors_.push_back("console." + type + ": " +
                        ConsoleText(params.value("args", json::array())));
    }
  }
  if (method == "Log.entryAdded") {
    const json& entry = params.value("entry", json::object());
    if (entry.value("level", "") == "error") {
      errors_.push_back("log: " + entry.value("text", "") + " " + entry.value("url", ""));
    }
  }
}

json Browser::Send(const std::string& method, const json& params, bool browser_level,
                   std::chrono::milliseconds timeout) {
  const int id = next_id_++;
  json message = {{"id", id}, {"method", method}, {"params", params}};
  if (!browser_level && !session_.empty()) message["sessionId"] = session_;
  if (!Write(message)) {
    error_ = "cannot write to chromium";
    return nullptr;
  }
  const auto deadline = Clock::now() + timeout;
  while (true) {
    json reply = Read(deadline);
    if (reply.is_null()) {
      error_ = method + (Exited() ? ": chromium exited"
                                  : ": no reply within " + std::to_string(timeout.count()) + " ms");
      return nullptr;
    }
    if (!reply.contains("id")) {
      OnEvent(reply);
      continue;
    }
    if (reply["id"] != id) continue;
    if (reply.contains("error")) {
      error_ = method + ": " + reply["error"].dump();
      return nullptr;
    }
    return reply.value("result", json::object());
  }
}

bool Browser::Navigate(const std::string& url) {
  loaded_ = false;
  if (Send("Page.navigate", {{"url", url}}).is_null()) return false;
  const auto deadline = Clock::now() + kReplyTimeout;
  while (!loaded_) {
    json event = Read(deadline);
    if (event.is_null()) return false;
    if (!event.contains("id")) OnEvent(event);
  }
  return true;
}

json Browser::Eval(const std::string& expression) {
  json result = Send("Runtime.evaluate",
                     {{"expression", expression}, {"awaitPromise", true}, {"returnByValue", true}});
  if (!result.is_object()) return nullptr;
  if (result.contains("exceptionDetails")) {
    error_ = "eval: " + result["exceptionDetails"].dump();
    return nullptr;
  }
  return result.value("result", json::object()).value("value", json());
}

bool Browser::WaitFor(const std::string& expression, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    json value = Eval("!!(" + expression + ")");
    if (value.is_boolean() && value.get<bool>()) return true;
    if (Clock::now() >= deadline) return false;
    // Drain events meanwhile (console errors, loads).
    json event = Read(Clock::now() + 50ms);
    if (event.is_object() && !event.contains("id")) OnEvent(event);
  }
}

bool Browser::Screenshot(const fs::path& path) {
  json shot = Send("Page.captureScreenshot", {{"format", "png"}});
  if (!shot.is_object() || !shot.contains("data")) return false;
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << Base64Decode(shot["data"].get<std::string>());
  return static_cast<bool>(out);
}

void Browser::Resize(int width, int height, bool mobile) {
  Send("Emulation.setDeviceMetricsOverride",
       {{"width", width}, {"height", height}, {"deviceScaleFactor", 1}, {"mobile", mobile}});
}

}  // namespace sluice::integration
