// The variables a job gets in Sluice's, Slurm's and LSF's dialects (R-COMPAT-2, issue 40): the
// host lists in each tool's own shape, which MPI launchers and workflow tools parse.
#include "server/job_variables.h"

#include <gtest/gtest.h>

namespace sluice::server {
namespace {

TEST(JobVariablesTest, CompressesRunsOfNumberedHostsKeepingOrderAndWidth) {
  EXPECT_EQ(CompressedHostList({"n1", "n2", "n3", "x"}), "n[1-3],x");
  EXPECT_EQ(CompressedHostList({"n1", "n3"}), "n1,n3");
  EXPECT_EQ(CompressedHostList({"c01", "c02", "c10"}), "c[01-02],c10");
  EXPECT_EQ(CompressedHostList({"c9", "c10"}), "c9,c10");  // widths differ: not one run
  EXPECT_EQ(CompressedHostList({"a", "b"}), "a,b");
  EXPECT_EQ(CompressedHostList({"h2", "h1"}), "h2,h1");  // the allocation's order is kept
  EXPECT_EQ(CompressedHostList({}), "");
}

TEST(JobVariablesTest, TasksPerNodeFoldsEqualNeighbours) {
  EXPECT_EQ(TasksPerNode({2, 2, 1}), "2(x2),1");
  EXPECT_EQ(TasksPerNode({3, 1}), "3,1");
  EXPECT_EQ(TasksPerNode({4}), "4");
  EXPECT_EQ(TasksPerNode({1, 2, 2, 2}), "1,2(x3)");
}

TEST(JobVariablesTest, NamesTheAllocationInEveryDialect) {
  JobVariablesInput job;
  job.id = 42;
  job.hosts = {{"n1", 2}, {"n2", 2}, {"gpu7", 1}};
  job.queue = "normal";
  job.name = "sim";
  job.user = "alice";
  job.cwd = "/home/alice";
  const std::map<std::string, std::string> v = JobVariables(job);
  EXPECT_EQ(v.at("SLUICE_JOB_ID"), "42");
  EXPECT_EQ(v.at("SLUICE_NTASKS"), "5");
  EXPECT_EQ(v.at("SLUICE_HOSTS"), "n1:2,n2:2,gpu7:1");
  EXPECT_EQ(v.at("SLURM_JOB_ID"), "42");
  EXPECT_EQ(v.at("SLURM_NNODES"), "3");
  EXPECT_EQ(v.at("SLURM_JOB_NODELIST"), "n[1-2],gpu7");
  EXPECT_EQ(v.at("SLURM_TASKS_PER_NODE"), "2(x2),1");
  EXPECT_EQ(v.at("SLURM_JOB_PARTITION"), "normal");
  EXPECT_EQ(v.at("SLURM_SUBMIT_DIR"), "/home/alice");
  EXPECT_EQ(v.at("LSB_HOSTS"), "n1 n1 n2 n2 gpu7");
  EXPECT_EQ(v.at("LSB_MCPU_HOSTS"), "n1 2 n2 2 gpu7 1");
  EXPECT_EQ(v.at("LSB_JOBINDEX"), "0");
  EXPECT_EQ(v.count("SLURM_ARRAY_TASK_ID"), 0u);
}

TEST(JobVariablesTest, AnArrayElementNamesItsArrayAndIndex) {
  JobVariablesInput job;
  job.id = 7;
  job.array_index = 3;
  job.hosts = {{"h", 1}};
  const std::map<std::string, std::string> v = JobVariables(job);
  EXPECT_EQ(v.at("SLUICE_ARRAY_ID"), "7");
  EXPECT_EQ(v.at("SLUICE_ARRAY_INDEX"), "3");
  EXPECT_EQ(v.at("SLURM_ARRAY_JOB_ID"), "7");
  EXPECT_EQ(v.at("SLURM_ARRAY_TASK_ID"), "3");
  EXPECT_EQ(v.at("LSB_JOBINDEX"), "3");
}

}  // namespace
}  // namespace sluice::server
