#include "testing/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace sluice::testing {

namespace fs = std::filesystem;

bool UpdateGolden() {
  const char* value = std::getenv("SLUICE_UPDATE_GOLDEN");
  return value != nullptr && std::string_view(value) == "1";
}

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool WriteFile(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

std::string FirstDifference(const std::string& want, const std::string& got) {
  std::istringstream a(want);
  std::istringstream b(got);
  std::string line_a;
  std::string line_b;
  for (int number = 1;; ++number) {
    bool more_a = static_cast<bool>(std::getline(a, line_a));
    bool more_b = static_cast<bool>(std::getline(b, line_b));
    if (!more_a && !more_b) return "files differ only in their final newline";
    if (!more_a || !more_b || line_a != line_b) {
      return "line " + std::to_string(number) + ": expected `" + (more_a ? line_a : "<eof>") +
             "`, got `" + (more_b ? line_b : "<eof>") + "`";
    }
  }
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "sluice_test_XXXXXX").string();
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) fs::remove_all(path_, ignored);
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const fs::path& scratch,
                         std::chrono::seconds timeout) {
  ProcessResult result;
  const fs::path out = scratch / "process.stdout";
  const fs::path err = scratch / "process.stderr";
  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (std::string& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    result.error = "cannot spawn " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.error = argv[0] + " timed out";
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  result.stdout_text = ReadFile(out).value_or("");
  result.stderr_text = ReadFile(err).value_or("");
  if (!WIFEXITED(status)) {
    result.error = argv[0] + " died (status " + std::to_string(status) + "): " + result.stderr_text;
    return result;
  }
  result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace sluice::testing
