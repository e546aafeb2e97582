// JobInfo's LaunchRecord (job_book.h, issue 45): a job that never started carries none, and
// ending a launch drops what only a started job needs while keeping what outlives the run.
#include <gtest/gtest.h>

#include "server/job_book.h"

namespace sluice::server {
namespace {

// Reading a waiting job's launch allocates nothing: every field reads as "never launched".
TEST(LaunchRecordTest, AJobThatNeverStartedReadsAnEmptyRecord) {
  const JobInfo job;
  EXPECT_TRUE(job.launch().empty());
  EXPECT_TRUE(job.launch().hosts.empty());
  EXPECT_EQ(job.launch().launch_sent_ms, -1);
  EXPECT_EQ(job.launch().run, 0u);
  // The shared empty record, not one of its own.
  EXPECT_EQ(&job.launch(), &JobInfo().launch());
}

TEST(LaunchRecordTest, EndingALaunchDropsTheRecordWhenNothingOutlivesTheRun) {
  JobInfo job;
  LaunchRecord& launch = job.mutable_launch();
  launch.hosts = {{"n1", 2}, {"n2", 1}};
  launch.launch_host = "n1";
  launch.launch_sent_ms = 1000;
  launch.run = (uint64_t{1} << 40) | 1;
  EXPECT_EQ(&job.launch(), &launch);
  job.EndLaunch();
  EXPECT_TRUE(job.launch().empty());
  EXPECT_EQ(&job.launch(), &JobInfo().launch());  // back to the shared empty record
}

// The lost run and the requeue's author outlive the launch (issue 44: a late exit of the run
// lost with its host still ends the job; the requeue names who ordered it).
TEST(LaunchRecordTest, EndingALaunchKeepsTheLostRunAndTheRequeuesAuthor) {
  JobInfo job;
  LaunchRecord& launch = job.mutable_launch();
  launch.hosts = {{"n1", 2}};
  launch.launch_host = "n1";
  launch.run = (uint64_t{3} << 40) | 7;
  launch.lost_run = launch.run;
  launch.lost_host = "n1";
  launch.requeue_by = "alice";
  job.EndLaunch();
  EXPECT_TRUE(job.launch().hosts.empty());
  EXPECT_TRUE(job.launch().launch_host.empty());
  EXPECT_EQ(job.launch().launch_sent_ms, -1);
  EXPECT_EQ(job.launch().run, 0u);
  EXPECT_EQ(job.launch().lost_run, (uint64_t{3} << 40) | 7);
  EXPECT_EQ(job.launch().lost_host.str(), "n1");
  EXPECT_EQ(job.launch().requeue_by.str(), "alice");
}

}  // namespace
}  // namespace sluice::server
