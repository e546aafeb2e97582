// Test support for running the real `sluice` binary and comparing files with golden copies.
//
// RunProcess spawns a program with stdout and stderr captured to files in a scratch
// directory, waits at most a bounded time and kills it by PID after that. TempDir is a
// fresh mkdtemp directory removed with its contents at scope exit. UpdateGolden() is true
// when SLUICE_UPDATE_GOLDEN=1 asks tests to rewrite their expected files.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::testing {

bool UpdateGolden();
std::optional<std::string> ReadFile(const std::filesystem::path& path);
bool WriteFile(const std::filesystem::path& path, std::string_view text);

// "line 3: expected `a`, got `b`" for the first differing line of two texts.
std::string FirstDifference(const std::string& want, const std::string& got);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  bool ok() const { return !path_.empty(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct ProcessResult {
  std::string error;  // empty when the process ran and exited (whatever its code)
  int exit_code = -1;
  std::string stdout_text;
  std::string stderr_text;
};

// Runs argv[0] with `argv`, output captured in `scratch`; killed after `timeout`.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::filesystem::path& scratch,
                         std::chrono::seconds timeout = std::chrono::seconds(300));

}  // namespace sluice::testing
