// The log flags of the daemons (`sluice server`, `sluice agent`; issue 47.10): one format, the
// same flags on both.
//   --log-level trace|debug|info|warn|error (default info)
//   --log-file PATH   append there instead of standard error
// Lines are `2026-12-05T10:10:04.229 info <message>`; under systemd (logging to standard error
// and that is the stream JOURNAL_STREAM names, daemon/journal_stream.h) `<6>info <message>`:
// no timestamp, which journald adds, and the syslog priority journald records the line at
// (sd-daemon(3)'s `<N>` prefixes, R-OPS-2).
// Thread-safety: set up once on the main thread, before the daemon's threads start.
#pragma once

#include <spdlog/common.h>

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

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

// The `<N>` journald reads at the start of a line logged at `level`: trace and debug <7>
// (debug), info <6>, warn <4> (warning), error <3>, critical <2>.
std::string_view JournalPrefix(spdlog::level::level_enum level);

}  // namespace sluice::cli
