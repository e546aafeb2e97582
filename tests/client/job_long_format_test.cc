// `jobs -l` (R-UX-4) and `submit --wait`'s exit codes (R-UX-5).
#include "client/job_long_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/text_fields.h"
#include "client/wait_exit.h"

namespace sluice::client {
namespace {

using nlohmann::json;

TEST(JobLongFormatTest, EveryFieldOnALabelledLine) {
  const json job = {{"id", 12},
                    {"name", "sim"},
                    {"user", "alice"},
                    {"queue", "normal"},
                    {"state", "EXIT"},
                    {"command", "job.sh a b"},
                    {"script_bytes", 120},
                    {"tasks", 4},
                    {"min_tasks", 4},
                    {"max_tasks", 4},
                    {"run_limit", 5400},
                    {"hosts", json::array({{{"name", "h1"}, {"slots", 4}}})},
                    {"submit_time", 1764450000},
                    {"end_time", 1764450100},
                    {"exit_code", 137},
                    {"cause", "RUN_LIMIT"},
                    {"message", "killed at its run limit"},
                    {"cpu_seconds", 12.5},
                    {"max_rss_mb", 64.2},
                    {"a_future_member", "shown"},
                    {"admission", {{"policy", "fifo"}, {"seq", 3}}}};
  const std::string text = FormatJobLong(job);
  for (std::string_view want : {"Job 12\n",
                                "  Name:",
                                "sim",
                                "  User:",
                                "alice",
                                "  State:",
                                "EXIT since",
                                "  Command:",
                                "job.sh a b (script, 120 bytes stored)",
                                "  Tasks:",
                                "4 (asked 4)",
                                "  Run limit:",
                                "1:30:00 (5400 s)",
                                "  Hosts:",
                                "h1:4",
                                "  Exit code:",
                                "137",
                                "  Cause:",
                                "RUN_LIMIT",
                                "  Message:",
                                "killed at its run limit",
                                "  CPU time:",
                                "12.5 s",
                                "  Peak memory:",
                                "64 MB",
                                "  a_future_member:",
                                "shown",
                                "  Admission:",
                                "policy",
                                "fifo",
                                "  Estimated start:"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << " in\n" << text;
  }
}

TEST(JobLongFormatTest, PendingReasonsWithPerHostDetailAndHint) {
  const json job = {{"id", 3},
                    {"state", "PENDING"},
                    {"reason", "NO_RESOURCE"},
                    {"estimated_start", nullptr},
                    {"unknown_because", "no run limits"},
                    {"reasons",
                     {{"main", "NO_RESOURCE"},
                      {"details", json::array({{{"code", "NO_RESOURCE"},
                                                {"resource", "slots"},
                                                {"needed", 8},
                                                {"available", 2},
                                                {"hosts", 2}}})},
                      {"hint", "waits for 6 slots"},
                      {"hosts", json::array({{{"host", "h1"}, {"room", 2}},
                                             {{"host", "h2"}, {"code", "HOST_CLOSED"}}})}}}};
  const std::string text = FormatJobLong(job);
  for (std::string_view want :
       {"  Pending reasons:\n", "    Per host:\n", "h1: room for 2", "h2: HOST_CLOSED",
        "What would let it start: waits for 6 slots", "unknown (no run limits)"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << " in\n" << text;
  }
}

// R-LAUNCH-2: one aligned line per step, after the job's own lines.
TEST(JobLongFormatTest, StepsAreListedUnderTheJob) {
  const json steps = json::parse(R"([
      {"step": 1, "host": "h1", "command": "hostname", "start_time": 1764450010,
       "end_time": 1764450012, "exit_code": 0, "signal": null, "cpu_seconds": 0.014,
       "max_rss_mb": 3.24, "state": "COMPLETED"},
      {"step": 2, "host": "host-two", "command": "sleep 100\u001b[2J", "start_time": 1764450020,
       "end_time": 1764450030, "exit_code": 137, "signal": 9, "cpu_seconds": null,
       "max_rss_mb": null, "state": "CANCELLED"},
      {"step": 3, "host": "h1", "command": "./run", "start_time": 1764450040, "end_time": 0,
       "exit_code": null, "signal": null, "cpu_seconds": null, "max_rss_mb": null,
       "state": "RUNNING"}])");
  const json job = {{"id", 12}, {"state", "RUNNING"}, {"steps", steps}};
  const std::string text = FormatJobLong(job);
  const size_t at = text.find("  Steps:\n");
  ASSERT_NE(at, std::string::npos) << text;
  // Each line's fields (separated by two spaces or more) and where each field starts.
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<size_t>> starts;
  size_t line_start = at + std::string("  Steps:\n").size();
  for (int i = 0; i < 4; ++i) {
    const size_t end = text.find('\n', line_start);
    ASSERT_NE(end, std::string::npos) << text;
    const std::string line = text.substr(line_start, end - line_start);
    ASSERT_EQ(line.rfind("    ", 0), 0u) << line;
    rows.emplace_back();
    starts.emplace_back();
    size_t pos = 4;
    while (pos < line.size()) {
      size_t next = line.find("  ", pos);
      if (next == std::string::npos) next = line.size();
      rows.back().push_back(line.substr(pos, next - pos));
      starts.back().push_back(pos);
      pos = line.find_first_not_of(' ', next);
      if (pos == std::string::npos) pos = line.size();
    }
    line_start = end + 1;
  }
  using Fields = std::vector<std::string>;
  EXPECT_EQ(rows[0], (Fields{"STEP", "HOST", "STATE", "EXIT", "START", "END", "CPU", "MAXRSS",
                             "COMMAND"}));
  EXPECT_EQ(rows[1], (Fields{"12.1", "h1", "COMPLETED", "0", LocalIsoTime(1764450010),
                             LocalIsoTime(1764450012), "0.01s", "3.2MB", "hostname"}));
  // The command's escape sequence is shown, not sent to the terminal.
  EXPECT_EQ(rows[2], (Fields{"12.2", "host-two", "CANCELLED", "137 (signal 9)",
                             LocalIsoTime(1764450020), LocalIsoTime(1764450030), "-", "-",
                             "sleep 100\\x1b[2J"}));
  EXPECT_EQ(rows[3], (Fields{"12.3", "h1", "RUNNING", "-", LocalIsoTime(1764450040), "-", "-",
                             "-", "./run"}));
  for (const auto& row_starts : starts) EXPECT_EQ(row_starts, starts[0]);  // aligned
  // `steps` is not repeated among the members this file does not know.
  EXPECT_EQ(text.find("  steps:"), std::string::npos) << text;
  // No steps, no section; steps it cannot read are said so, not dropped.
  EXPECT_EQ(FormatJobLong({{"id", 12}, {"steps", json::array()}}).find("Steps"),
            std::string::npos);
  const std::string bad = FormatJobLong({{"id", 12}, {"steps", json::array({{{"step", 1}}})}});
  EXPECT_NE(bad.find("Steps:"), std::string::npos) << bad;
  EXPECT_NE(bad.find("unreadable (steps[0].host: missing)"), std::string::npos) << bad;
}

TEST(JobLongFormatTest, SeveralJobsAndNone) {
  EXPECT_EQ(FormatJobsLong(json::array()), "No jobs found\n");
  const std::string two = FormatJobsLong(json::array({{{"id", 1}}, {{"id", 2}}}));
  EXPECT_NE(two.find("Job 1\n"), std::string::npos);
  EXPECT_NE(two.find("\nJob 2\n"), std::string::npos);
}

TEST(WaitExitCodeTest, DoneExitKilledAndNoCode) {
  EXPECT_EQ(WaitExitCode({{"state", "DONE"}, {"exit_code", 0}}), 0);
  EXPECT_EQ(WaitExitCode({{"state", "EXIT"}, {"exit_code", 3}}), 3);
  EXPECT_EQ(WaitExitCode({{"state", "CANCELLED"}, {"exit_code", 143}}), 143);
  EXPECT_EQ(WaitExitCode({{"state", "EXIT"}, {"exit_code", nullptr}}), 1);
  EXPECT_EQ(WaitExitCode({{"state", "EXIT"}, {"exit_code", -1}}), 1);
  EXPECT_EQ(WaitExitCode({{"state", "CANCELLED"}}), 1);
  EXPECT_TRUE(IsEndState("DONE"));
  EXPECT_FALSE(IsEndState("RUNNING"));
}

}  // namespace
}  // namespace sluice::client
