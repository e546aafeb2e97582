// `jobs -l` (R-UX-4) and `submit --wait`'s exit codes (R-UX-5).
#include "client/job_long_format.h"

#include <gtest/gtest.h>

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
