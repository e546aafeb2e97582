// Golden `sluice sim` cases (STYLE.md "Golden tests"): every directory under
// tests/golden/cases/<area>/<case>/ that holds a workload.jsonl is one case:
//   description.txt            one line: what the case shows
//   cluster.yaml               the cluster
//   workload.jsonl             the jobs
//   args                       optional: extra `sluice sim` flags, whitespace-separated
//   pending_at                 optional: a time T for `--pending-at T`
//   expected.decisions.jsonl   the --decisions file
//   expected.pending.txt       `--pending-at T` text       (with pending_at)
//   expected.pending.jsonl     `--pending-at T --json`     (with pending_at)
//   expected.error.txt         instead of the above: the run must fail (exit 2) with this
//                              stderr (bad input cases)
// SLUICE_UPDATE_GOLDEN=1 rewrites the expected files; reviewers read the diffs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "testing/build_paths.h"
#include "testing/subprocess.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::FirstDifference;
using testing::ReadFile;
using testing::RunProcess;
using testing::TempDir;
using testing::UpdateGolden;
using testing::WriteFile;

fs::path CasesRoot() { return fs::path(testing::SourceDir()) / "tests" / "golden" / "cases"; }

std::vector<std::string> FindCases() {
  std::vector<std::string> cases;
  if (!fs::exists(CasesRoot())) return cases;
  for (const auto& entry : fs::recursive_directory_iterator(CasesRoot())) {
    if (entry.is_regular_file() && entry.path().filename() == "workload.jsonl") {
      cases.push_back(fs::relative(entry.path().parent_path(), CasesRoot()).string());
    }
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Compares `got` with the expected file, or rewrites it under SLUICE_UPDATE_GOLDEN=1.
void ExpectGolden(const fs::path& expected, const std::string& got) {
  if (UpdateGolden()) {
    ASSERT_TRUE(WriteFile(expected, got)) << expected;
    return;
  }
  std::optional<std::string> want = ReadFile(expected);
  ASSERT_TRUE(want.has_value()) << "missing " << expected << " (run with SLUICE_UPDATE_GOLDEN=1)";
  EXPECT_EQ(*want, got) << expected.filename() << ": " << FirstDifference(*want, got);
}

class SimCaseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SimCaseTest, MatchesGoldenFiles) {
  const fs::path dir = CasesRoot() / GetParam();
  ASSERT_TRUE(fs::exists(dir / "description.txt")) << "every case needs a description.txt";
  TempDir scratch;
  ASSERT_TRUE(scratch.ok());
  std::vector<std::string> base = {testing::SluiceBinary(),
                                   "sim",
                                   "--no-progress",
                                   "--workload",
                                   (dir / "workload.jsonl").string(),
                                   "--config",
                                   (dir / "cluster.yaml").string()};
  for (const std::string& word : Words(ReadFile(dir / "args").value_or(""))) base.push_back(word);

  if (fs::exists(dir / "expected.error.txt")) {
    testing::ProcessResult run = RunProcess(base, scratch.path());
    ASSERT_TRUE(run.error.empty()) << run.error;
    EXPECT_EQ(run.exit_code, 2);
    // Paths in messages are made relative to the case directory.
    std::string err = run.stderr_text;
    const std::string prefix = dir.string() + "/";
    for (size_t at; (at = err.find(prefix)) != std::string::npos;) err.erase(at, prefix.size());
    ExpectGolden(dir / "expected.error.txt", err);
    return;
  }

  std::vector<std::string> args = base;
  const fs::path decisions = scratch.path() / "decisions.jsonl";
  args.insert(args.end(), {"--json", "--decisions", decisions.string()});
  testing::ProcessResult run = RunProcess(args, scratch.path());
  ASSERT_TRUE(run.error.empty()) << run.error;
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  ExpectGolden(dir / "expected.decisions.jsonl", ReadFile(decisions).value_or(""));

  std::optional<std::string> pending_at = ReadFile(dir / "pending_at");
  if (!pending_at) return;
  for (bool json : {false, true}) {
    std::vector<std::string> pending = base;
    pending.push_back("--pending-at");
    pending.push_back(Words(*pending_at).at(0));
    if (json) pending.push_back("--json");
    testing::ProcessResult report = RunProcess(pending, scratch.path());
    ASSERT_TRUE(report.error.empty()) << report.error;
    ASSERT_EQ(report.exit_code, 0) << report.stderr_text;
    ExpectGolden(dir / (json ? "expected.pending.jsonl" : "expected.pending.txt"),
                 report.stdout_text);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SimCaseTest, ::testing::ValuesIn(FindCases()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SimCaseTest);

}  // namespace
}  // namespace sluice
