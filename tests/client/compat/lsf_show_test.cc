// What the LSF drop-ins print: `bjobs -json -o` as toil reads it, bjobs' table and -o columns.
#include "client/compat/lsf_show.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace sluice::client::compat {
namespace {

CompatJob Job(std::string state, std::string cause = "", std::optional<int32_t> code = {}) {
  return CompatJob{.id = 101,
                   .name = "toil_job_0",
                   .user = "root",
                   .queue = "normal",
                   .state = std::move(state),
                   .cause = std::move(cause),
                   .submit_time = 1796425873,
                   .exit_code = code,
                   .hosts = {{"n1", 1}}};
}

TEST(LsfShowTest, BjobsJsonHasToilsFieldsInLsfsLayout) {
  Result<BjobsFormat> format = ParseBjobsFormat("user exit_code stat exit_reason pend_reason");
  ASSERT_TRUE(format.has_value());
  const std::string text = BjobsJson(*format, {Job("EXIT", "NON_ZERO_EXIT", 1)}, 0);
  EXPECT_EQ(text,
            "{\n  \"COMMAND\":\"bjobs\",\n  \"JOBS\":1,\n  \"RECORDS\":[\n    {\n"
            "      \"USER\":\"root\",\n      \"EXIT_CODE\":\"1\",\n      \"STAT\":\"EXIT\",\n"
            "      \"EXIT_REASON\":\"\",\n      \"PEND_REASON\":\"\"\n    }\n  ]\n}\n");
  EXPECT_TRUE(nlohmann::json::accept(text));
}

TEST(LsfShowTest, BjobsStatesAndReasonsFollowLsf) {
  struct Case {
    std::string_view name;
    CompatJob job;
    std::string_view stat, exit_reason, pend_reason;
  };
  const Case cases[] = {
      {"new", Job("PENDING"), "PEND", "", "New job is waiting for scheduling;"},
      {"held", Job("HELD"), "PSUSP", "", "The job was suspended by the user while pending;"},
      {"running", Job("RUNNING"), "RUN", "", ""},
      {"done", Job("DONE", "", 0), "DONE", "", ""},
      {"cancelled", Job("CANCELLED", "", 143), "EXIT", "TERM_OWNER: job killed by owner", ""},
      {"run limit", Job("EXIT", "RUN_LIMIT", 137), "EXIT",
       "TERM_RUNLIMIT: job killed after reaching LSF run time limit", ""},
  };
  Result<BjobsFormat> format = ParseBjobsFormat("stat exit_reason pend_reason delimiter='|'");
  ASSERT_TRUE(format.has_value());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string want = "STAT|EXIT_REASON|PEND_REASON\n" + std::string(c.stat) + "|" +
                             (c.exit_reason.empty() ? "-" : std::string(c.exit_reason)) + "|" +
                             (c.pend_reason.empty() ? "-" : std::string(c.pend_reason)) + "\n";
    EXPECT_EQ(BjobsColumns(*format, {c.job}, 0), want);
  }
}

TEST(LsfShowTest, BjobsTableCutsLongNamesUnlessWide) {
  CompatJob job = Job("RUNNING");
  job.name = "a_rather_long_name";
  EXPECT_NE(BjobsLine(job, false).find("*long_name"), std::string::npos);
  EXPECT_NE(BjobsLine(job, true).find("a_rather_long_name"), std::string::npos);
}

TEST(LsfShowTest, UnknownFieldIsRefused) {
  Result<BjobsFormat> format = ParseBjobsFormat("jobid bogus");
  ASSERT_FALSE(format.has_value());
  EXPECT_EQ(format.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::client::compat
