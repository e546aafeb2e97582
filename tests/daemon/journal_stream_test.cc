// Whether standard error is the journal (daemon/journal_stream.h): JOURNAL_STREAM's
// `DEVICE:INODE`, and the check against the stream standard error really is.
#include "daemon/journal_stream.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "testing/subprocess.h"

namespace sluice::daemon {
namespace {

TEST(JournalStreamTest, ParsesDeviceAndInode) {
  EXPECT_EQ(ParseJournalStream("8:12345"), (StreamId{.device = 8, .inode = 12345}));
  for (const char* bad : {"", "8", "8:", ":5", "8:5:1", "a:5", "8:-5", " 8:5"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseJournalStream(bad).has_value());
  }
}

// Standard error is pointed at a file and JOURNAL_STREAM at it or at another file.
TEST(JournalStreamTest, OnlyTheStreamItNamesIsTheJournal) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string named = (dir.path() / "journal").string();
  const std::string other = (dir.path() / "other").string();
  ASSERT_TRUE(testing::WriteFile(named, ""));
  ASSERT_TRUE(testing::WriteFile(other, ""));
  struct stat st {};
  ASSERT_EQ(stat(named.c_str(), &st), 0);
  const std::string id = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);

  const int saved = dup(STDERR_FILENO);
  const auto point_stderr_at = [](const std::string& path) {
    const int fd = open(path.c_str(), O_WRONLY | O_APPEND);
    dup2(fd, STDERR_FILENO);
    close(fd);
  };
  const char* before = std::getenv("JOURNAL_STREAM");
  const std::string restore = before != nullptr ? before : "";
  setenv("JOURNAL_STREAM", id.c_str(), 1);
  point_stderr_at(named);
  const bool on_named = StderrIsJournal();
  point_stderr_at(other);
  const bool on_other = StderrIsJournal();
  unsetenv("JOURNAL_STREAM");
  point_stderr_at(named);
  const bool unset = StderrIsJournal();
  dup2(saved, STDERR_FILENO);
  close(saved);
  if (before != nullptr) setenv("JOURNAL_STREAM", restore.c_str(), 1);

  EXPECT_TRUE(on_named);
  EXPECT_FALSE(on_other);
  EXPECT_FALSE(unset);
}

}  // namespace
}  // namespace sluice::daemon
