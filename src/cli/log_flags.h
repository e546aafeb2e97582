// The log flags of the daemons (`sluice server`, `sluice agent`; issue 47.10): one format, the
// same flags on both.
//   --log-level trace|debug|info|warn|error (default info)
//   --log-file PATH   append there instead of standard error
// Lines are `2026-12-05T10:10:04.229 info <message>`; under systemd (JOURNAL_STREAM set and
// logging to standard error) without the timestamp, which journald adds (R-OPS-2).
// Thread-safety: set up once on the main thread, before the daemon's threads start.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/status.h"

namespace sluice::cli {

struct LogFlags {
  std::string level = "info";
  std::string file;
};

void AddLogFlags(CLI::App* cmd, LogFlags& flags);

// Makes the default logger (named `name`) as the flags say. Errors: kInvalidArgument for an
// unknown level or a file that cannot be opened, naming the flag.
Status SetUpLogging(const LogFlags& flags, const std::string& name);

}  // namespace sluice::cli
