// The systemd units of packaging/systemd/ (R-OPS-1, R-OPS-2; docs/systemd.md): `systemd-analyze
// verify` accepts each without a word, on a copy whose ExecStart= names the built binary
// (verify checks that the command exists; the installed /usr/bin/sluice does not exist here).
// `verify` exits 0 even for unknown keys and bad values, which it only prints: any output
// fails the test, and a unit broken on purpose shows that the check sees it. Skipped without
// systemd-analyze (Debian's `systemd` package; no running systemd is needed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "testing/build_paths.h"
#include "testing/subprocess.h"

namespace sluice::integration {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kAnalyze = "/usr/bin/systemd-analyze";

std::vector<fs::path> Units() {
  std::vector<fs::path> units;
  for (const auto& entry :
       fs::directory_iterator(fs::path(testing::SourceDir()) / "packaging" / "systemd")) {
    if (entry.path().extension() == ".service") units.push_back(entry.path());
  }
  std::sort(units.begin(), units.end());
  return units;
}

// `text` with the installed binary's path replaced by the built one's.
std::string WithBuiltBinary(std::string text) {
  const std::string installed = "/usr/bin/sluice ";
  for (size_t at = text.find(installed); at != std::string::npos; at = text.find(installed, at)) {
    const std::string built = std::string(testing::SluiceBinary()) + " ";
    text.replace(at, installed.size(), built);
    at += built.size();
  }
  return text;
}

// What `systemd-analyze verify` says of `unit` (stdout and stderr), or why it did not run.
std::string Verify(const fs::path& unit, const fs::path& scratch) {
  const testing::ProcessResult run =
      testing::RunProcess({kAnalyze, "verify", "--man=no", unit.string()}, scratch, 60s);
  if (!run.error.empty()) return "did not run: " + run.error;
  std::string said = run.stdout_text + run.stderr_text;
  if (run.exit_code != 0) said += "(exit " + std::to_string(run.exit_code) + ")";
  return said;
}

TEST(SystemdUnitsTest, ServerAndAgentUnitsAreNotifyServicesWithAWatchdog) {
  const std::vector<fs::path> units = Units();
  std::vector<std::string> names;
  for (const fs::path& unit : units) names.push_back(unit.filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"sluice-agent.service", "sluice-server.service"}));
  for (const fs::path& unit : units) {
    SCOPED_TRACE(unit.string());
    const std::string text = testing::ReadFile(unit).value_or("");
    for (const char* line : {"\nType=notify\n", "\nNotifyAccess=main\n", "\nWatchdogSec="}) {
      EXPECT_NE(text.find(line), std::string::npos) << line;
    }
  }
}

TEST(SystemdUnitsTest, SystemdAnalyzeVerifyAcceptsEachUnitWithoutAWord) {
  if (access(kAnalyze, X_OK) != 0) GTEST_SKIP() << kAnalyze << " is not installed (systemd)";
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  fs::create_directories(dir.path() / "scratch");
  const std::vector<fs::path> units = Units();
  ASSERT_FALSE(units.empty());
  for (const fs::path& unit : units) {
    SCOPED_TRACE(unit.string());
    const fs::path copy = dir.path() / unit.filename();
    ASSERT_TRUE(testing::WriteFile(copy, WithBuiltBinary(testing::ReadFile(unit).value_or(""))));
    EXPECT_EQ(Verify(copy, dir.path() / "scratch"), "");
  }
  // The check sees a unit's mistakes: a misspelt key is only printed, with exit status 0.
  const fs::path broken = dir.path() / "broken.service";
  std::string text = WithBuiltBinary(testing::ReadFile(units.front()).value_or(""));
  text.replace(text.find("WatchdogSec="), 12, "WatchdogSek=");
  ASSERT_TRUE(testing::WriteFile(broken, text));
  EXPECT_NE(Verify(broken, dir.path() / "scratch").find("WatchdogSek"), std::string::npos);
}

}  // namespace
}  // namespace sluice::integration
