// Usage mistakes exit 2 with CLI11's message on stderr, help exits 0 (the exit codes the
// client verbs document; CLI11 alone would return its own numbers such as 105 or 109).
#include <gtest/gtest.h>

#include "testing/build_paths.h"
#include "testing/subprocess.h"

namespace sluice::client {
namespace {

using ::sluice::testing::RunProcess;
using ::sluice::testing::TempDir;

TEST(CliExitCodeTest, UsageMistakesExitTwoAndHelpExitsZero) {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string stderr_has;
  };
  const std::vector<Case> cases = {
      {{"submit", "--no-such-flag", "--", "true"}, 2, "--no-such-flag"},
      {{}, 2, "subcommand"},
      {{"queue", "open"}, 2, "required"},
      {{"server", "--config", "c.yaml", "--state", "s", "--keep-ended-seconds", "10"},
       2,
       "at least 60 seconds"},
      {{"jobs", "--help"}, 0, ""},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {sluice::testing::SluiceBinary()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    ::sluice::testing::ProcessResult run = RunProcess(argv, dir.path(), std::chrono::seconds(20));
    SCOPED_TRACE(::testing::PrintToString(c.args));
    ASSERT_TRUE(run.error.empty()) << run.error;
    EXPECT_EQ(run.exit_code, c.exit_code) << run.stderr_text;
    EXPECT_NE(run.stderr_text.find(c.stderr_has), std::string::npos) << run.stderr_text;
  }
}

}  // namespace
}  // namespace sluice::client
