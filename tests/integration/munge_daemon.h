// Test support: a private `munged` (R-SEC-2 tests) in the foreground, with its key, socket,
// pid, log and seed files in a directory of its own (mode 0755, so other accounts reach the
// socket). `--force` lets it run as root; it is stopped by PID at destruction.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "integration/cluster_harness.h"
#include "testing/subprocess.h"

namespace sluice::integration {

class MungeDaemon {
 public:
  // Creates the key (mungekey) in a temp dir of its own and starts the daemon; ok() tells
  // whether it serves.
  MungeDaemon();
  ~MungeDaemon();

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  std::string socket() const { return (dir_ / "munge.socket").string(); }

  // Stops the daemon and starts it again with the same key (it forgets what it decoded).
  bool Restart();
  void Stop();

 private:
  bool Start();

  testing::TempDir temp_;
  std::filesystem::path dir_;
  std::unique_ptr<ChildProcess> process_;
  bool ok_ = false;
  std::string error_;
  int starts_ = 0;
};

}  // namespace sluice::integration
