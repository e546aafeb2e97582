// The `sluice` front-end (cli/front_end.h, issue 21): which command lines it runs itself and
// which it hands to sluice-full; and that both binaries give the same answers.
#include "cli/front_end.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "testing/build_paths.h"

namespace sluice::cli {
namespace {

bool Runs(std::vector<const char*> argv, const char* env = nullptr) {
  return RunsInFrontEnd(static_cast<int>(argv.size()), argv.data(), env);
}

TEST(FrontEndTest, RunsTheClientVerbsOverPlainHttpItself) {
  for (const char* verb : {"submit", "jobs", "cancel", "hold", "release", "hosts", "queues",
                           "limits", "queue", "host", "modify", "requeue", "history", "peek",
                           "launch", "run", "alloc", "rsv"}) {
    SCOPED_TRACE(verb);
    EXPECT_TRUE(IsFrontEndVerb(verb));
    EXPECT_TRUE(Runs({"sluice", verb, "--server", "http://127.0.0.1:1"}));
  }
  EXPECT_TRUE(Runs({"sluice", "submit", "--", "sleep", "1"}, "http://h:1,http://g:2"));
}

TEST(FrontEndTest, HandsEverythingElseToTheCompleteBinary) {
  EXPECT_FALSE(Runs({"sluice"}));
  EXPECT_FALSE(Runs({"sluice", "--help"}));
  for (const char* verb : {"server", "agent", "sim", "bench", "gen", "resreq", "gen-history"}) {
    SCOPED_TRACE(verb);
    EXPECT_FALSE(Runs({"sluice", verb}));
  }
  // No TLS in the front-end: an https:// URL anywhere, or in SLUICE_SERVER.
  EXPECT_FALSE(Runs({"sluice", "jobs", "--server", "https://c:8443"}));
  EXPECT_FALSE(Runs({"sluice", "jobs", "--server=https://c:8443"}));
  EXPECT_FALSE(Runs({"sluice", "jobs"}, "http://a:1,https://b:2"));
}

// Output of `command` (stdout and stderr) and its exit status.
std::pair<std::string, int> RunShell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  return {out, WEXITSTATUS(status)};
}

TEST(FrontEndTest, BothBinariesAnswerAlike) {
  const std::string front = sluice::testing::SluiceBinary();
  for (const std::string args :
       {"submit --bogus-flag", "hosts --server http://a,,b --token t", "cancel", "", "--help",
        "submit --help", "jobs --help", "history --help", "modify --bogus", "requeue",
        "peek --help", "resreq check 'select[mem>1]'", "queue --help", "host", "hold --bogus",
        "release --help", "queues --help", "limits --json --bogus"}) {
    SCOPED_TRACE(args);
    const auto a = RunShell("env -u SLUICE_SERVER " + front + " " + args);
    // The complete binary under the same argv[0] (CLI11 prints it in usage lines).
    const auto b = RunShell("env -u SLUICE_SERVER bash -c 'exec -a \"$0\" \"$0-full\" \"$@\"' " +
                            front + " " + args);
    EXPECT_EQ(a.second, b.second);
    EXPECT_EQ(a.first, b.first);
  }
}

// The allocator is a build choice that nothing else would notice: were the link to drop
// mimalloc (an --as-needed link), the simulator and server would quietly fall back to
// glibc's malloc. MIMALLOC_VERBOSE makes mimalloc say so when it starts.
TEST(FrontEndTest, TheCompleteBinaryRunsOnMimallocWhenBuiltWithIt) {
  if (!sluice::testing::SluiceFullUsesMimalloc()) GTEST_SKIP() << "built without mimalloc";
  const std::string full = std::string(sluice::testing::SluiceBinary()) + "-full";
  auto [out, status] = RunShell("MIMALLOC_VERBOSE=1 " + full + " --help");
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("mimalloc: process init"), std::string::npos) << out;
}

}  // namespace
}  // namespace sluice::cli
