#include "daemon/journal_stream.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>

namespace sluice::daemon {
namespace {

std::optional<uint64_t> ParseDecimal(std::string_view text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::optional<StreamId> ParseJournalStream(std::string_view value) {
  const size_t colon = value.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::optional<uint64_t> device = ParseDecimal(value.substr(0, colon));
  const std::optional<uint64_t> inode = ParseDecimal(value.substr(colon + 1));
  if (!device || !inode) return std::nullopt;
  return StreamId{.device = *device, .inode = *inode};
}

bool StderrIsJournal() {
  const char* value = std::getenv("JOURNAL_STREAM");
  if (value == nullptr) return false;
  const std::optional<StreamId> journal = ParseJournalStream(value);
  struct stat st {};
  if (!journal || fstat(STDERR_FILENO, &st) != 0) return false;
  return StreamId{.device = static_cast<uint64_t>(st.st_dev),
                  .inode = static_cast<uint64_t>(st.st_ino)} == *journal;
}

}  // namespace sluice::daemon
