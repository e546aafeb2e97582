#include "drmaa/job_status.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "drmaa/drmaa.h"

namespace sluice::drmaa {
namespace {

using nlohmann::json;

TEST(JobStatusTest, MapsEveryStateToAProgramState) {
  struct Case {
    const char* state;
    int want;
  };
  const Case cases[] = {
      {"PENDING", DRMAA_PS_QUEUED_ACTIVE}, {"ADMITTING", DRMAA_PS_QUEUED_ACTIVE},
      {"HELD", DRMAA_PS_USER_ON_HOLD},     {"RUNNING", DRMAA_PS_RUNNING},
      {"DONE", DRMAA_PS_DONE},             {"EXIT", DRMAA_PS_FAILED},
      {"CANCELLED", DRMAA_PS_FAILED},      {"SOMETHING_NEW", DRMAA_PS_UNDETERMINED},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.state);
    EXPECT_EQ(ProgramStateOf(json{{"state", c.state}}), c.want);
  }
  EXPECT_EQ(ProgramStateOf(json{{"state", 3}}), DRMAA_PS_UNDETERMINED);
  EXPECT_EQ(ProgramStateOf(json::array()), DRMAA_PS_UNDETERMINED);
}

TEST(JobStatusTest, ReadsHowAJobEnded) {
  struct Case {
    std::string_view name;
    json job;
    Termination want;
  };
  const json started = 1764450001;
  const Case cases[] = {
      {"done", {{"state", "DONE"}, {"start_time", started}, {"exit_code", 0}},
       {.exited = true, .exit_code = 0}},
      {"non-zero exit",
       {{"state", "EXIT"}, {"cause", "NON_ZERO_EXIT"}, {"start_time", started}, {"exit_code", 3}},
       {.exited = true, .exit_code = 3}},
      {"shell's child killed",
       {{"state", "EXIT"}, {"cause", "NON_ZERO_EXIT"}, {"start_time", started}, {"exit_code", 137}},
       {.exited = true, .exit_code = 137}},
      {"run limit",
       {{"state", "EXIT"}, {"cause", "RUN_LIMIT"}, {"start_time", started}, {"exit_code", 143}},
       {.signalled = true, .signal = SIGTERM}},
      {"memory limit, no code",
       {{"state", "EXIT"}, {"cause", "MEM_LIMIT"}, {"start_time", started}},
       {.signalled = true, .signal = SIGKILL}},
      {"host lost after start",
       {{"state", "EXIT"}, {"cause", "HOST_LOST"}, {"start_time", started}},
       {.signalled = true, .signal = SIGKILL}},
      {"host lost before start", {{"state", "EXIT"}, {"cause", "HOST_LOST"}}, {.aborted = true}},
      {"unschedulable", {{"state", "EXIT"}, {"cause", "UNSCHEDULABLE"}}, {.aborted = true}},
      {"dispatch failed",
       {{"state", "EXIT"}, {"cause", "DISPATCH_FAILED"}, {"start_time", started}},
       {.aborted = true}},
      {"cancelled pending", {{"state", "CANCELLED"}}, {.aborted = true}},
      {"cancelled running",
       {{"state", "CANCELLED"}, {"start_time", started}, {"exit_code", 143}},
       {.signalled = true, .signal = SIGTERM}},
      {"cancelled as it ended by itself",
       {{"state", "CANCELLED"}, {"start_time", started}, {"exit_code", 2}},
       {.exited = true, .exit_code = 2}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(HasEnded(c.job));
    const Termination t = TerminationOf(c.job);
    EXPECT_EQ(t.exited, c.want.exited);
    EXPECT_EQ(t.exit_code, c.want.exit_code);
    EXPECT_EQ(t.signalled, c.want.signalled);
    EXPECT_EQ(t.signal, c.want.signal);
    EXPECT_EQ(t.aborted, c.want.aborted);
  }
}

TEST(JobStatusTest, ACancelledRunningJobWaitsForItsKillReport) {
  EXPECT_FALSE(KillReported(json{{"state", "CANCELLED"}, {"start_time", 1}}));
  EXPECT_TRUE(KillReported(json{{"state", "CANCELLED"}, {"start_time", 1}, {"exit_code", 143}}));
  EXPECT_TRUE(KillReported(json{{"state", "CANCELLED"}}));
  EXPECT_TRUE(KillReported(json{{"state", "DONE"}, {"start_time", 1}}));
  EXPECT_FALSE(HasEnded(json{{"state", "RUNNING"}}));
}

TEST(JobStatusTest, StatRoundTrips) {
  const Termination cases[] = {
      {.exited = true, .exit_code = 0},   {.exited = true, .exit_code = 255},
      {.signalled = true, .signal = 9},   {.aborted = true},
      {.signalled = true, .signal = 15, .core_dumped = true},
  };
  for (const Termination& t : cases) {
    const Termination back = DecodeStat(EncodeStat(t));
    EXPECT_EQ(back.exited, t.exited);
    EXPECT_EQ(back.exit_code, t.exited ? t.exit_code : 0);
    EXPECT_EQ(back.signalled, t.signalled);
    EXPECT_EQ(back.signal, t.signalled ? t.signal : 0);
    EXPECT_EQ(back.aborted, t.aborted);
    EXPECT_EQ(back.core_dumped, t.core_dumped);
  }
  EXPECT_FALSE(DecodeStat(0).exited);  // a stat of 0 is no ended job
}

TEST(JobStatusTest, ResourceUsageIsNameValueOfWhatIsKnown) {
  const json job = {{"state", "DONE"},        {"submit_time", 100}, {"start_time", 110},
                    {"end_time", 150},        {"exit_code", 0},     {"cpu_seconds", 1.5},
                    {"max_rss_mb", nullptr},
                    {"hosts", json::array({{{"name", "h1"}, {"slots", 2}}, {{"name", "h2"}}})}};
  EXPECT_EQ(ResourceUsageOf(job),
            (std::vector<std::string>{"submission_time=100", "start_time=110", "end_time=150",
                                      "wallclock=40", "cpu=1.500", "hosts=h1:2,h2",
                                      "exit_code=0"}));
  EXPECT_TRUE(ResourceUsageOf(json{{"state", "CANCELLED"}}).empty());
}

TEST(JobStatusTest, NamesSignals) {
  EXPECT_EQ(SignalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(63), "SIG63");
}

}  // namespace
}  // namespace sluice::drmaa
