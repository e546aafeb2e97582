// What the Slurm drop-ins print, compared with real Slurm 22.05's output for the same job
// (the clients' recordings, docs/compat.md): scontrol show job, squeue -h --format, sacct -P.
#include "client/compat/slurm_show.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace sluice::client::compat {
namespace {

// Times print in local time: the recordings were made in UTC.
class SlurmShowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

// 2026-12-04T23:11:13 UTC.
constexpr int64_t kSubmit = 1796425873;

CompatJob RunningWrap() {
  return CompatJob{.id = 1,
                   .name = "wrap",
                   .user = "root",
                   .account = "root",
                   .queue = "batch",
                   .state = "RUNNING",
                   .cwd = "/w",
                   .submit_time = kSubmit,
                   .start_time = kSubmit + 2,
                   .tasks = 1,
                   .hosts = {{"n1", 1}},
                   .uid = 0,
                   .gid = 0,
                   .group = "root"};
}

TEST_F(SlurmShowTest, ScontrolShowJobOfARunningJobIsSlurmsRecord) {
  CompatJob job = RunningWrap();
  job.priority = 4294901759;
  job.output = "/dev/null";
  const std::string want =
      "JobId=1 JobName=wrap\n"
      "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
      "   Priority=4294901759 Nice=0 Account=(null) QOS=(null)\n"
      "   JobState=RUNNING Reason=None Dependency=(null)\n"
      "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
      "   DerivedExitCode=0:0\n"
      "   RunTime=00:00:01 TimeLimit=UNLIMITED TimeMin=N/A\n"
      "   SubmitTime=2026-12-04T23:11:13 EligibleTime=2026-12-04T23:11:13\n"
      "   AccrueTime=2026-12-04T23:11:13\n"
      "   StartTime=2026-12-04T23:11:15 EndTime=Unknown Deadline=N/A\n"
      "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-04T23:11:15 Scheduler=Main\n"
      "   Partition=batch AllocNode:Sid=localhost:0\n"
      "   ReqNodeList=(null) ExcNodeList=(null)\n"
      "   NodeList=n1\n"
      "   BatchHost=n1\n"
      "   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
      "   TRES=cpu=1,node=1,billing=1\n"
      "   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n"
      "   JOB_GRES=(null)\n"
      "     Nodes=n1 CPU_IDs=0-0 Mem=0 GRES=\n"
      "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
      "   Features=(null) DelayBoot=00:00:00\n"
      "   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n"
      "   Command=(null)\n"
      "   WorkDir=/w\n"
      "   StdErr=/dev/null\n"
      "   StdIn=/dev/null\n"
      "   StdOut=/dev/null\n"
      "   Power=\n"
      "   \n\n";
  EXPECT_EQ(ScontrolShowJob(job, true, kSubmit + 3), want);
}

TEST_F(SlurmShowTest, ScontrolShowJobOfAPendingJobHasNoTimesOrHostsYet) {
  CompatJob job = RunningWrap();
  job.name = "snakejob_a_2";
  job.state = "PENDING";
  job.reason = "NEW_JOB";
  job.start_time = 0;
  job.hosts.clear();
  job.run_limit = 300;
  const std::string text = ScontrolShowJob(job, true, kSubmit);
  for (const char* line : {"   JobState=PENDING Reason=None Dependency=(null)\n",
                           "   RunTime=00:00:00 TimeLimit=00:05:00 TimeMin=N/A\n",
                           "   AccrueTime=Unknown\n",
                           "   StartTime=Unknown EndTime=Unknown Deadline=N/A\n",
                           "   NodeList=\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  EXPECT_EQ(text.find("BatchHost="), std::string::npos) << text;
  EXPECT_EQ(text.find("JOB_GRES="), std::string::npos) << text;
}

TEST_F(SlurmShowTest, ScontrolStatesReasonsAndExitCodesFollowSlurm) {
  struct Case {
    std::string_view name;
    std::string state, cause;
    std::optional<int32_t> exit_code;
    std::string_view want_state, want_reason, want_exit;
  };
  const Case cases[] = {
      {"done", "DONE", "", 0, "COMPLETED", "None", "0:0"},
      {"failed", "EXIT", "NON_ZERO_EXIT", 3, "FAILED", "NonZeroExitCode", "3:0"},
      {"cancelled (SIGTERM)", "CANCELLED", "", 143, "CANCELLED", "None", "0:15"},
      {"run limit", "EXIT", "RUN_LIMIT", 137, "TIMEOUT", "TimeLimit", "0:9"},
      {"memory limit", "EXIT", "MEM_LIMIT", 137, "OUT_OF_MEMORY", "OutOfMemory", "0:9"},
      {"host lost", "EXIT", "HOST_LOST", std::nullopt, "NODE_FAIL", "NodeDown", "0:0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    CompatJob job = RunningWrap();
    job.state = c.state;
    job.cause = c.cause;
    job.exit_code = c.exit_code;
    job.end_time = kSubmit + 3;
    const std::string text = ScontrolShowJob(job, false, kSubmit + 10);
    EXPECT_NE(text.find("JobState=" + std::string(c.want_state) + " Reason=" +
                        std::string(c.want_reason) + " "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("ExitCode=" + std::string(c.want_exit) + "\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("DerivedExitCode"), std::string::npos);  // -dd only
  }
}

TEST_F(SlurmShowTest, SqueueFormatsAsTheRecordedCalls) {
  Result<std::vector<SqueueField>> toil = ParseSqueueFormat("%i %t %M");
  ASSERT_TRUE(toil.has_value());
  EXPECT_EQ(SqueueLine(*toil, RunningWrap(), kSubmit + 3), "1 R 0:01\n");
  Result<std::vector<SqueueField>> standard = ParseSqueueFormat(kSqueueDefaultFormat);
  ASSERT_TRUE(standard.has_value());
  EXPECT_EQ(SqueueHeader(*standard),
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES "
            "NODELIST(REASON)\n");
  EXPECT_EQ(SqueueLine(*standard, RunningWrap(), kSubmit + 3),
            "                 1     batch     wrap     root  R       0:01      1 n1\n");
  CompatJob pending = RunningWrap();
  pending.state = "PENDING";
  pending.reason = "NO_RESOURCE";
  pending.start_time = 0;
  pending.hosts.clear();
  EXPECT_EQ(SqueueLine(*toil, pending, kSubmit + 3), "1 PD 0:00\n");
  EXPECT_EQ(SqueueLine(*standard, pending, kSubmit + 3),
            "                 1     batch     wrap     root PD       0:00      1 (Resources)\n");
}

TEST_F(SlurmShowTest, SqueueRefusesAFieldItDoesNotKnow) {
  Result<std::vector<SqueueField>> format = ParseSqueueFormat("%i %y");
  ASSERT_FALSE(format.has_value());
  EXPECT_EQ(format.error().code(), StatusCode::kInvalidArgument);
}

TEST_F(SlurmShowTest, SacctParsableLinesAreWhatToilAndSnakemakeSplit) {
  Result<std::vector<SacctField>> toil = ParseSacctFields("JobIDRaw,State,ExitCode");
  ASSERT_TRUE(toil.has_value());
  CompatJob job = RunningWrap();
  job.state = "EXIT";
  job.cause = "NON_ZERO_EXIT";
  job.exit_code = 1;
  job.end_time = kSubmit + 5;
  EXPECT_EQ(SacctLine(*toil, job, true, kSubmit + 9), "1|FAILED|1:0\n");
  EXPECT_EQ(SacctHeader(*toil, true), "JobIDRaw|State|ExitCode\n");
  Result<std::vector<SacctField>> snakemake = ParseSacctFields("jobidraw,state");
  ASSERT_TRUE(snakemake.has_value());
  job.state = "CANCELLED";
  EXPECT_EQ(SacctLine(*snakemake, job, true, kSubmit + 9), "1|CANCELLED\n");
  Result<std::vector<SacctField>> width = ParseSacctFields("Account%20");
  ASSERT_TRUE(width.has_value());
  EXPECT_EQ((*width)[0].width, 20);
  EXPECT_FALSE(ParseSacctFields("JobIDRaw,Bogus").has_value());
}

TEST(SlurmStateNamesTest, EveryStateHasANameAndACode) {
  for (SlurmState state : kAllSlurmStates) {
    EXPECT_NE(ToString(state), "UNKNOWN");
    EXPECT_NE(ShortCode(state), "?");
  }
  for (LsfStat stat : kAllLsfStats) EXPECT_NE(ToString(stat), "UNKWN");
}

}  // namespace
}  // namespace sluice::client::compat
