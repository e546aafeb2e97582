// The `jobs:` section (issue 47): what never travels with a job, what may, and where output goes
// when a job names none. Defaults hold when the section is absent; every bad value is refused at
// its line.
#include "config/jobs_yaml.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace sluice::config::yaml {
namespace {

Result<JobPolicy> Read(std::string_view text) {
  const Reader reader("f.yaml");
  JobPolicy jobs;
  SLUICE_RETURN_IF_ERROR(ReadJobs(reader, Field{YAML::Load(std::string(text)), "jobs", 1}, jobs));
  return jobs;
}

TEST(JobsYamlTest, DefaultsDenyCredentialsAndWriteOutputToTheWorkingDirectory) {
  Result<JobPolicy> jobs = Read("~");
  ASSERT_TRUE(jobs.has_value()) << jobs.error().ToString();
  EXPECT_EQ(jobs->env_deny, (std::vector<std::string>{"SLUICE_TOKEN", "SLUICE_*_TOKEN", "MUNGE_*"}));
  EXPECT_TRUE(jobs->env_allow.empty());
  EXPECT_EQ(jobs->default_output, "sluice-%j.out");
  EXPECT_EQ(jobs->default_array_output, "sluice-%A_%a.out");
}

TEST(JobsYamlTest, ReadsEveryKey) {
  Result<JobPolicy> jobs = Read(
      "env_deny: [SECRET_*]\n"
      "env_allow: [PATH, HOME, MY*]\n"
      "default_output: /var/spool/out/%j\n"
      "default_array_output: \"\"\n");
  ASSERT_TRUE(jobs.has_value()) << jobs.error().ToString();
  EXPECT_EQ(jobs->env_deny, (std::vector<std::string>{"SECRET_*"}));
  EXPECT_EQ(jobs->env_allow, (std::vector<std::string>{"PATH", "HOME", "MY*"}));
  EXPECT_EQ(jobs->default_output, "/var/spool/out/%j");
  EXPECT_EQ(jobs->default_array_output, "");
  EXPECT_TRUE(Read("env_deny: []\n").value().env_deny.empty());
}

TEST(JobsYamlTest, RefusesWhatItCannotUseAtItsPlace) {
  const Result<JobPolicy> key = Read("env_denied: [A]\n");
  ASSERT_FALSE(key.has_value());
  EXPECT_NE(key.error().message().find("unknown key"), std::string::npos) << key.error().message();
  const Result<JobPolicy> glob = Read("env_deny: [\"A B\"]\n");
  ASSERT_FALSE(glob.has_value());
  EXPECT_NE(glob.error().message().find("glob"), std::string::npos) << glob.error().message();
  EXPECT_FALSE(Read("env_allow: PATH\n").has_value());  // a list, not a string
  EXPECT_FALSE(Read("[1, 2]\n").has_value());
  EXPECT_FALSE(Read("default_output: {a: 1}\n").has_value());
}

}  // namespace
}  // namespace sluice::config::yaml
