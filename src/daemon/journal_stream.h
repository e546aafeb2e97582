// Whether standard error goes to systemd's journal (R-OPS-2): systemd sets JOURNAL_STREAM to
// `DEVICE:INODE` of the stream it connected, and a process whose standard error is that stream
// (not a file it was redirected to by a script that inherited the variable) logs without
// timestamps (journald adds them) and with `<N>` priority prefixes (sd-daemon(3)).
// Thread-safety: plain functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sluice::daemon {

struct StreamId {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const StreamId&) const = default;
};

// JOURNAL_STREAM's value; nullopt when it is not two decimal numbers joined by `:`.
std::optional<StreamId> ParseJournalStream(std::string_view value);

// True when JOURNAL_STREAM names the stream open on standard error.
bool StderrIsJournal();

}  // namespace sluice::daemon
