// Running a helper program (agent/command_output.h): found on a search path but never through a
// relative entry, its outputs and exit status captured, and a helper that hangs or floods its
// output killed with everything it started.
#include "agent/command_output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;
using sluice::testing::TempDir;

std::string WriteScript(const std::filesystem::path& dir, const std::string& name,
                        const std::string& body) {
  const std::filesystem::path path = dir / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path.string();
}

// A process is gone, or only a zombie waiting for a reaper that is not us.
bool Gone(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return text.empty() || (paren != std::string::npos && text.substr(paren + 2, 1) == "Z");
}

TEST(FindOnPathTest, TakesTheFirstExecutableAndSkipsRelativeEntries) {
  TempDir first;
  TempDir second;
  std::ofstream(first.path() / "tool") << "not executable";
  const std::string wanted = WriteScript(second.path(), "tool", "true");
  const std::string path = ":relative:" + first.path().string() + ":" + second.path().string();
  EXPECT_EQ(FindOnPath("tool", path), wanted);
  EXPECT_EQ(FindOnPath("missing", path), std::nullopt);
  EXPECT_EQ(FindOnPath("../tool", path), std::nullopt);
  EXPECT_EQ(FindOnPath("tool", ""), std::nullopt);
}

TEST(RunCommandTest, CapturesBothOutputsAndTheExitStatus) {
  TempDir dir;
  const std::string script = WriteScript(
      dir.path(), "talk", "echo \"out $1\"; echo err >&2; read x; echo \"in:$x\"; exit 3");
  Result<CommandOutput> ran = RunCommand({script, "one"});
  ASSERT_TRUE(ran) << ran.error().message();
  EXPECT_EQ(ran->exit_code, 3);
  EXPECT_EQ(ran->out, "out one\nin:\n");  // stdin is /dev/null
  EXPECT_EQ(ran->err, "err\n");
}

TEST(RunCommandTest, AProgramThatCannotStartIsUnavailable) {
  Result<CommandOutput> ran = RunCommand({"/nonexistent/nvidia-smi"});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code(), StatusCode::kUnavailable);
}

// The helper's child keeps the output open after the helper is gone: the whole group goes at
// the timeout, not only the helper.
TEST(RunCommandTest, AHangIsKilledWithItsChildrenAtTheTimeout) {
  TempDir dir;
  const std::string pids = (dir.path() / "pids").string();
  const std::string script = WriteScript(
      dir.path(), "hang", "sleep 60 & echo $! > '" + pids + "'; echo $$ >> '" + pids + "'; wait");
  const auto start = std::chrono::steady_clock::now();
  // Long enough for a loaded machine to start the script and write its pids first.
  Result<CommandOutput> ran = RunCommand({script}, {.timeout = 2s});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  std::ifstream listed(pids);
  std::string pid;
  int count = 0;
  while (listed >> pid) {
    ++count;
    EXPECT_TRUE(sluice::testing::Eventually([&] { return Gone(pid); }, 10s)) << pid;
  }
  EXPECT_EQ(count, 2);
}

TEST(RunCommandTest, TooMuchOutputIsKilled) {
  TempDir dir;
  const std::string script = WriteScript(dir.path(), "flood", "exec yes");
  Result<CommandOutput> ran = RunCommand({script}, {.timeout = 20s, .max_bytes = 4096});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code(), StatusCode::kResourceExhausted);
}

TEST(RunCommandTest, DeathBySignalIsUnavailable) {
  TempDir dir;
  const std::string script = WriteScript(dir.path(), "crash", "kill -TERM $$");
  Result<CommandOutput> ran = RunCommand({script});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace sluice::agent
