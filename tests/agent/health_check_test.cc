// The host's health program (agent/health_check.h), run for real with small shell scripts:
// exit 0 passes, a non-zero exit fails with its last line (or "exit N"), an `ERROR` line fails
// even with exit 0 and is the message, a hang is killed at the timeout with what it started, and
// the checker runs the configured program at once and reports only changes.
#include "agent/health_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <vector>

#include "testing/subprocess.h"
#include "testing/wait.h"

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;
using sluice::testing::Eventually;
using sluice::testing::TempDir;

core::HealthCheck Script(const TempDir& dir, const std::string& name, const std::string& body,
                         Duration timeout = 20) {
  const std::filesystem::path path = dir.path() / name;
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return core::HealthCheck{.program = path.string(), .interval = 60, .timeout = timeout};
}

TEST(RunHealthCheckTest, ExitZeroPasses) {
  TempDir dir;
  const wire::HealthReport report =
      RunHealthCheck(Script(dir, "ok", "echo all fine; exit 0"), "h1");
  EXPECT_TRUE(report.ok);
  EXPECT_EQ(report.message, "");
}

TEST(RunHealthCheckTest, ANonZeroExitFailsWithItsLastLineOrItsStatus) {
  TempDir dir;
  const wire::HealthReport said = RunHealthCheck(
      Script(dir, "said", "echo checking; echo 'disk /scratch full' >&2; exit 1"), "h1");
  EXPECT_FALSE(said.ok);
  EXPECT_EQ(said.message, "disk /scratch full");
  const wire::HealthReport silent = RunHealthCheck(Script(dir, "silent", "exit 3"), "h1");
  EXPECT_FALSE(silent.ok);
  EXPECT_EQ(silent.message, "exit 3");
}

TEST(RunHealthCheckTest, AnErrorLineFailsEvenWithExitZeroAndIsTheMessage) {
  TempDir dir;
  const wire::HealthReport report = RunHealthCheck(
      Script(dir, "nhc",
             "echo 'checking mounts'\n"
             "echo 'ERROR: nhc: Health check failed: check_fs_mount: /home not mounted'\n"
             "echo 'ERROR: second'\n"
             "exit 0"),
      "h1");
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.message, "ERROR: nhc: Health check failed: check_fs_mount: /home not mounted");
}

TEST(RunHealthCheckTest, AHangIsKilledAtTheTimeout) {
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  const wire::HealthReport report =
      RunHealthCheck(Script(dir, "hang", "sleep 600 & wait", /*timeout=*/1), "h1");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 60s);  // killed, not waited for
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.message, "timed out after 1 s");
}

TEST(RunHealthCheckTest, ASignalOrAMissingProgramFails) {
  TempDir dir;
  const wire::HealthReport killed = RunHealthCheck(Script(dir, "die", "kill -9 $$"), "h1");
  EXPECT_FALSE(killed.ok);
  EXPECT_EQ(killed.message, "killed by signal 9");
  const wire::HealthReport missing = RunHealthCheck(
      {.program = dir.path().string() + "/none", .interval = 60, .timeout = 5}, "h1");
  EXPECT_FALSE(missing.ok);
  EXPECT_FALSE(missing.message.empty());
}

TEST(RunHealthCheckTest, RunsWithAFixedEnvironmentAndNoStdin) {
  TempDir dir;
  setenv("SLUICE_HEALTH_TEST_LEAK", "1", 1);
  const wire::HealthReport report = RunHealthCheck(
      Script(dir, "env",
             "[ -z \"$SLUICE_HEALTH_TEST_LEAK\" ] || { echo ERROR: leaked; exit 1; }\n"
             "[ \"$SLUICE_HOST\" = h7 ] || { echo ERROR: host; exit 1; }\n"
             "[ \"$LC_ALL\" = C ] || { echo ERROR: locale; exit 1; }\n"
             "read line && { echo ERROR: stdin; exit 1; }\n"
             "exit 0"),
      "h7");
  unsetenv("SLUICE_HEALTH_TEST_LEAK");
  EXPECT_TRUE(report.ok) << report.message;
}

TEST(RunHealthCheckTest, ALongMessageIsClipped) {
  TempDir dir;
  const wire::HealthReport report =
      RunHealthCheck(Script(dir, "long", "printf 'ERROR: %0600d\\n' 0"), "h1");
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.message.size(), wire::kMaxHealthMessageBytes);
}

// The checker, driven by a file the test writes: each change of result is reported once.
TEST(HealthCheckerTest, RunsAtOnceAndReportsEachChange) {
  TempDir dir;
  const std::string state = (dir.path() / "state").string();
  std::ofstream(state) << "ok\n";
  core::HealthCheck check =
      Script(dir, "check", "[ \"$(cat " + state + ")\" = ok ] || { echo ERROR: bad; exit 1; }");
  check.interval = 1;
  check.timeout = 1;
  std::mutex mu;
  std::vector<wire::HealthReport> seen;
  HealthChecker checker("h1", [&](const wire::HealthReport& r) {
    std::lock_guard lock(mu);
    seen.push_back(r);
  });
  auto count = [&] {
    std::lock_guard lock(mu);
    return seen.size();
  };
  EXPECT_EQ(checker.Last(), std::nullopt);
  checker.Configure(check);
  ASSERT_TRUE(Eventually([&] { return count() == 1; }));
  EXPECT_TRUE(checker.Last()->ok);
  std::ofstream(state) << "fail\n";
  ASSERT_TRUE(Eventually([&] { return count() == 2; }));
  EXPECT_EQ(checker.Last(), (wire::HealthReport{.ok = false, .message = "ERROR: bad"}));
  std::ofstream(state) << "ok\n";
  ASSERT_TRUE(Eventually([&] { return count() == 3; }));
  EXPECT_TRUE(checker.Last()->ok);
  std::lock_guard lock(mu);
  EXPECT_FALSE(seen[1].ok);  // one report per change, not one per run
  EXPECT_TRUE(seen[2].ok);
}

TEST(HealthCheckerTest, NoCheckForgetsTheLastResult) {
  TempDir dir;
  std::atomic<int> reports{0};
  HealthChecker checker("h1", [&](const wire::HealthReport&) { ++reports; });
  checker.Configure(Script(dir, "fail", "exit 1"));
  ASSERT_TRUE(Eventually([&] { return reports == 1; }));
  checker.Configure(std::nullopt);
  EXPECT_EQ(checker.Last(), std::nullopt);
}

}  // namespace
}  // namespace sluice::agent
