// srun's and salloc's options (client/compat/srun_request.h): what a step or an interactive
// job is asked for, GPUs included, and clear refusals.
#include "client/compat/srun_request.h"

#include <gtest/gtest.h>

namespace sluice::client::compat {
namespace {

Result<SrunRequest> Parse(std::vector<std::string> args, bool command_required = true) {
  return ParseSrun(args, command_required);
}

TEST(SrunRequestTest, OpenMpisLaunchLineLeavesTheCommandAsGiven) {
  Result<SrunRequest> r = Parse({"--ntasks-per-node=1", "--kill-on-bad-exit", "--cpu-bind=none",
                                 "--nodes=2", "--nodelist=n1,n2", "--ntasks=2", "orted", "-mca",
                                 "x"});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->per_node, 1);
  EXPECT_EQ(r->nodes, 2);
  EXPECT_EQ(r->ntasks, 2);
  EXPECT_TRUE(r->kill_on_bad_exit);
  EXPECT_EQ(r->nodelist, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(r->command, (std::vector<std::string>{"orted", "-mca", "x"}));
  EXPECT_FALSE(r->gpus.has_value());
}

TEST(SrunRequestTest, GpuOptionsBecomeTheInteractiveJobsGpuSection) {
  struct Case {
    std::vector<std::string> args;
    std::string resreq;
  };
  const Case cases[] = {
      {{"-G2", "--pty", "bash"}, "gpu[num=2/host]"},
      {{"--gpus", "a100:1", "bash"}, "gpu[num=1/host:gmodel=a100]"},
      {{"--gpus-per-node=2", "-N", "2", "bash"}, "span[ptile=1] gpu[num=2/host]"},
      {{"--gpus=4", "-N2", "bash"}, "span[ptile=1] gpu[num=2/host]"},  // 2 per node
      {{"--gpus-per-task=1", "-n", "4", "bash"}, "gpu[num=1/task]"},
      {{"--gres=gpu:v100:2", "--ntasks-per-node=2", "bash"}, "span[ptile=2] gpu[num=2/host:gmodel=v100]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    Result<SrunRequest> r = Parse(c.args);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    Result<SubmitFlags> flags = AllocationFlags(*r);
    ASSERT_TRUE(flags.has_value()) << flags.error().message();
    EXPECT_EQ(flags->resreq, c.resreq);
  }
  // salloc: no command, a shell.
  Result<SrunRequest> salloc = Parse({"-n", "2", "--gpus-per-node=1"}, false);
  ASSERT_TRUE(salloc.has_value()) << salloc.error().message();
  Result<SubmitFlags> flags = AllocationFlags(*salloc);
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(flags->tasks, "2");
  EXPECT_EQ(flags->resreq, "gpu[num=1/host]");
  // -N lays the job out over that many hosts, as sbatch does.
  salloc = Parse({"-N", "2", "--gpus=4"}, false);
  ASSERT_TRUE(salloc.has_value());
  flags = AllocationFlags(*salloc);
  ASSERT_TRUE(flags.has_value()) << flags.error().message();
  EXPECT_EQ(flags->tasks, "2");
  EXPECT_EQ(flags->resreq, "span[ptile=1] gpu[num=2/host]");
}

TEST(SrunRequestTest, BadGpuOptionsAreRefusedNamingThem) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const Case cases[] = {
      {{"--gpus=x", "bash"}, "--gpus x"},
      {{"--gres=mps:2", "bash"}, "--gres mps:2"},
      {{"--gpus=1", "--gpus-per-node=1", "bash"}, "give one of --gpus"},
      {{"-G"}, "requires an argument"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0]);
    Result<SrunRequest> r = Parse(c.args);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().message().find(c.says), std::string::npos) << r.error().message();
  }
  // --gpus over nodes that do not share it evenly: refused when the job is asked for.
  Result<SrunRequest> uneven = Parse({"--gpus=3", "-N", "2", "bash"});
  ASSERT_TRUE(uneven.has_value());
  Result<SubmitFlags> flags = AllocationFlags(*uneven);
  ASSERT_FALSE(flags.has_value());
  EXPECT_NE(flags.error().message().find("--gpus-per-node"), std::string::npos)
      << flags.error().message();
}

TEST(SrunRequestTest, SplitWordsDropsEmptyWords) {
  EXPECT_EQ(SplitWords(" a,,b  c,", " ,"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitWords("", ",").empty());
}

}  // namespace
}  // namespace sluice::client::compat
