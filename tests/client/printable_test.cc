// Issue 48: a job name with terminal escapes (ESC, OSC, NUL, C1) reached every user's terminal
// through `sluice jobs -u all`. Every user-supplied field is printed with its controls escaped.
#include "client/printable.h"

#include <gtest/gtest.h>

#include "client/format.h"
#include "client/job_long_format.h"

namespace sluice::client {
namespace {

TEST(PrintableTest, EscapesEveryControlCharacterAndKeepsTheRest) {
  EXPECT_EQ(PrintableField("plain name"), "plain name");
  EXPECT_EQ(PrintableField("\x1b[2Jx"), "\\x1b[2Jx");
  EXPECT_EQ(PrintableField("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(PrintableField(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(PrintableField("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(PrintableField("\xc2\x9b" "31m"), "\\u009b31m");  // C1 CSI in UTF-8
  EXPECT_EQ(PrintableField("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");
  EXPECT_EQ(PrintableText("a\nb\tc\x1b"), "a\nb\tc\\x1b");
  // Escaping is idempotent: its output has no control character left.
  const std::string once = PrintableField("\x1b\x07\xc2\x85");
  EXPECT_EQ(PrintableField(once), once);
}

TEST(PrintableTest, JobListingsCarryNoEscapeFromAJobsFields) {
  const nlohmann::json jobs = nlohmann::json::array(
      {{{"id", 1},
        {"name", "\x1b]0;pwned\x07\x1b[2J"},
        {"user", "mallory"},
        {"state", "EXIT"},
        {"queue", "normal"},
        {"command", "echo\nforged line"},
        {"cwd", "/tmp/\x1b[31m"},
        {"message", "\x1b[1A"}}});
  for (const std::string& text : {FormatJobs(jobs, 0), FormatJobsLong(jobs)}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
    EXPECT_EQ(text.find('\x07'), std::string::npos);
    EXPECT_EQ(text.find("\nforged line"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice::client
