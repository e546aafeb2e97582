// Test support: a headless Chromium driven over the Chrome DevTools Protocol on a pipe
// (--remote-debugging-pipe: commands on the child's fd 3, replies and events on its fd 4,
// each message JSON ended by a NUL byte), for the dashboard's browser test (R-UI-4). No
// library, no network port: the browser is a child of the test, in a process group of its
// own with a temporary profile, and is killed by that group's id when the Browser ends.
//
// Every wait is bounded. JavaScript errors (uncaught exceptions, console.error, failed
// loads reported in the log) are collected in errors() for the test to check.
// Thread-safety: one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "testing/subprocess.h"

namespace sluice::integration {

class Browser {
 public:
  // The chromium binary to use ($SLUICE_CHROMIUM, else chromium / chromium-browser /
  // google-chrome on PATH); nullopt when there is none.
  static std::optional<std::string> Find();

  // Starts `binary` headless at `width` x `height`; ok() is false (and error() says why)
  // when it cannot start, exits, or does not answer within kStartTimeout.
  Browser(const std::string& binary, int width, int height);

  // How long a starting browser may take to answer its first command. Chromium's start (its
  // zygote, a renderer, a fresh profile) takes seconds on an idle machine and far more on a
  // loaded one; this bounds a browser that hangs, not a slow one, and a browser that exits
  // ends the wait at once.
  static constexpr std::chrono::seconds kStartTimeout{180};
  // How long a started browser may take to answer one command.
  static constexpr std::chrono::seconds kReplyTimeout{15};
  ~Browser();
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  // Sends a command to the page's session (or the browser when `browser_level`) and waits at
  // most `timeout` for its reply; returns its "result", or a null json (error() says why).
  nlohmann::json Send(const std::string& method,
                      const nlohmann::json& params = nlohmann::json::object(),
                      bool browser_level = false,
                      std::chrono::milliseconds timeout = kReplyTimeout);
  // Loads `url` and waits for the load event (bounded).
  bool Navigate(const std::string& url);
  // Evaluates `expression` in the page (promises awaited); returns its value by value.
  nlohmann::json Eval(const std::string& expression);
  // Polls `expression` every 50 ms until it is truthy, for at most `timeout`.
  bool WaitFor(const std::string& expression,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Writes a PNG of the viewport to `path`.
  bool Screenshot(const std::filesystem::path& path);
  // Resizes the viewport (device metrics).
  void Resize(int width, int height, bool mobile = false);

  const std::vector<std::string>& errors() const { return errors_; }

 private:
  bool Write(const nlohmann::json& message);
  // True once the browser process has exited (not reaped here).
  bool Exited() const;
  // Reads one message (events are recorded) until `deadline`; null json on timeout or EOF.
  nlohmann::json Read(std::chrono::steady_clock::time_point deadline);
  void OnEvent(const nlohmann::json& message);

  testing::TempDir profile_;
  pid_t pid_ = -1;
  int to_browser_ = -1;
  int from_browser_ = -1;
  std::string buffer_;
  int next_id_ = 1;
  std::string session_;
  std::string error_;
  bool loaded_ = false;
  std::vector<std::string> errors_;
};

}  // namespace sluice::integration
