// Job script directives (R-UX-1): #SLUICE, #BSUB and #SBATCH lines fill the submit flags,
// stop at the first command, name their line when wrong; the command line wins.
#include "client/directives.h"

#include <gtest/gtest.h>

namespace sluice::client {
namespace {

constexpr int64_t kNow = 1'764'450'000;

Directives Parse(std::string_view script) {
  Result<Directives> parsed = ParseDirectives(script, "job.sh", kNow);
  EXPECT_TRUE(parsed.has_value()) << parsed.error().message();
  return parsed.has_value() ? *parsed : Directives{};
}

TEST(DirectivesTest, BsubLinesSetTheirFlags) {
  const Directives d = Parse(
      "#!/bin/bash\n"
      "#BSUB -n 4\n"
      "#BSUB -q short -W 1:30\n"
      "#BSUB -J \"my job\" -o out.%J -e err.%J\n"
      "#BSUB -R \"span[hosts=1]\" -x\n"
      "#BSUB -w 'done(12)' -P proj -b 12:30\n"
      "echo hi\n");
  EXPECT_EQ(d.flags.tasks, "4");
  EXPECT_EQ(d.flags.queue, "short");
  EXPECT_EQ(d.flags.run_limit, "1:30");
  EXPECT_EQ(d.flags.name, "my job");
  EXPECT_EQ(d.flags.output, "out.%J");
  EXPECT_EQ(d.flags.error, "err.%J");
  EXPECT_EQ(d.flags.resreq, "span[hosts=1]");
  EXPECT_TRUE(d.flags.exclusive);
  EXPECT_EQ(d.flags.depend, "done(12)");
  EXPECT_EQ(d.flags.project, "proj");
  EXPECT_EQ(d.flags.begin, "12:30");
  EXPECT_TRUE(d.warnings.empty());
}

TEST(DirectivesTest, SbatchLongAndShortFormsAndSlurmTimes) {
  const Directives d = Parse(
      "#!/bin/sh\n"
      "#SBATCH --ntasks=8\n"
      "#SBATCH -p batch\n"
      "#SBATCH --time=1-02:03:04   # a day and a bit\n"
      "#SBATCH --job-name=sim -o slurm-%j.out\n"
      "#SBATCH --error err.txt --exclusive\n"
      "#SBATCH --dependency=afterok:12:13,afterany:14\n"
      "#SBATCH --begin=now+2hours\n"
      "#SBATCH --array=1-50%5\n"
      "srun ./a.out\n");
  EXPECT_EQ(d.flags.tasks, "8");
  EXPECT_EQ(d.flags.queue, "batch");
  EXPECT_EQ(d.flags.run_limit, std::to_string(86400 + 2 * 3600 + 3 * 60 + 4) + "s");
  EXPECT_EQ(d.flags.name, "sim");
  EXPECT_EQ(d.flags.output, "slurm-%j.out");
  EXPECT_EQ(d.flags.error, "err.txt");
  EXPECT_TRUE(d.flags.exclusive);
  EXPECT_EQ(d.flags.depend, "done(12) && done(13) && ended(14)");
  EXPECT_EQ(d.flags.begin, "+7200");
  EXPECT_EQ(d.flags.array, "1-50%5");
}

TEST(DirectivesTest, SluiceLinesTakeTheSubmitFlags) {
  const Directives d = Parse("#SLUICE -n 2,4 -q normal --run-limit=10m -J x --priority 5 -H\n");
  EXPECT_EQ(d.flags.tasks, "2,4");
  EXPECT_EQ(d.flags.queue, "normal");
  EXPECT_EQ(d.flags.run_limit, "10m");
  EXPECT_EQ(d.flags.name, "x");
  EXPECT_EQ(d.flags.priority, 5);
  EXPECT_TRUE(d.flags.hold);
}

TEST(DirectivesTest, LsfArrayNamesSplitIntoNameAndArray) {
  const Directives d = Parse("#BSUB -J 'sweep[1-1000:2]%50'\n");
  EXPECT_EQ(d.flags.name, "sweep");
  EXPECT_EQ(d.flags.array, "1-1000:2%50");
}

TEST(DirectivesTest, DirectivesStopAtTheFirstCommand) {
  const Directives d = Parse(
      "#!/bin/sh\n"
      "\n"
      "# a plain comment\n"
      "#SBATCH -n 2\n"
      "echo start\n"
      "#SBATCH -n 64\n"
      "#SBATCH --bogus\n");
  EXPECT_EQ(d.flags.tasks, "2");
}

TEST(DirectivesTest, LaterDirectivesWinAndDisabledOnesAreComments) {
  const Directives d = Parse("#SBATCH -n 2\n# SBATCH -n 9\n##SBATCH -n 7\n#SBATCH -n 3\n");
  EXPECT_EQ(d.flags.tasks, "3");
}

TEST(DirectivesTest, SlurmOnlyOptionsAreWarnedAboutAndIgnored) {
  const Directives d = Parse("#SBATCH --mail-user=a@b --mail-type=END -N 1\n");
  EXPECT_EQ(d.warnings.size(), 2u);
  EXPECT_EQ(d.flags.resreq, "span[hosts=1]");
}

TEST(DirectivesTest, ABadDirectiveNamesItsLine) {
  struct Case {
    std::string_view name;
    std::string_view script;
    std::string_view want;  // in the message
  };
  const Case cases[] = {
      {"bad time", "#!/bin/sh\n#SBATCH -n 1\n#SBATCH --time=abc\n", "job.sh:3: #SBATCH --time=abc"},
      {"unknown option", "#BSUB -Z 3\n", "job.sh:1: #BSUB -Z"},
      {"missing value", "\n#SBATCH -p\n", "job.sh:2: #SBATCH -p"},
      {"bad tasks", "#BSUB -n four\n", "job.sh:1: #BSUB -n four"},
      {"bare word", "#SLUICE hello\n", "job.sh:1: #SLUICE hello"},
      {"unterminated quote", "#BSUB -J 'x\n", "job.sh:1: #BSUB"},
      {"bad dependency", "#SBATCH -d singleton\n", "job.sh:1: #SBATCH -d singleton"},
      {"bad array", "#SBATCH --array=a-b\n", "job.sh:1: #SBATCH --array=a-b"},
      {"bad node count", "#SBATCH --nodes=x\n", "job.sh:1: #SBATCH --nodes=x"},
      {"bad exclusive", "#SBATCH --exclusive=all\n", "job.sh:1: #SBATCH --exclusive=all"},
      {"flag with value", "#SBATCH --hold=yes\n", "job.sh:1: #SBATCH --hold=yes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Directives> parsed = ParseDirectives(c.script, "job.sh", kNow);
    ASSERT_FALSE(parsed.has_value());
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find(c.want), std::string::npos) << parsed.error().message();
  }
}

TEST(DirectivesTest, GpuDirectivesOfEachDialect) {
  struct Case {
    std::string_view name;
    std::string_view script;
    std::string_view want_resreq;
    std::string_view want_gpu;  // SubmitFlags::gpu (#SLUICE --gpu, applied at submission)
  };
  const Case cases[] = {
      {"#SBATCH gres with a type", "#SBATCH --gres=gpu:a100:2\n#SBATCH -N 1\n",
       "span[hosts=1] gpu[num=2/host:gmodel=a100]", ""},
      {"#SBATCH per task", "#SBATCH -n 2\n#SBATCH --gpus-per-task=1\n", "gpu[num=1/task]", ""},
      {"#SBATCH the same option on a later line wins",
       "#SBATCH --gpus-per-node=1\n#SBATCH --gpus-per-node=3\n", "gpu[num=3/host]", ""},
      {"#BSUB -gpu after -R", "#BSUB -gpu \"num=2:gmodel=Tesla-V100\"\n#BSUB -R span[hosts=1]\n",
       "span[hosts=1] gpu[num=2:gmodel=\"Tesla-V100\"]", ""},
      {"#BSUB -gpu -", "#BSUB -gpu -\n", "gpu[num=1]", ""},
      {"#SLUICE --gpu", "#SLUICE -R span[hosts=1] --gpu num=2\n", "span[hosts=1]", "num=2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Directives d = Parse(c.script);
    EXPECT_EQ(d.flags.resreq, c.want_resreq);
    EXPECT_EQ(d.flags.gpu, c.want_gpu);
  }
}

TEST(DirectivesTest, GpuRefusalsNameTheirLine) {
  struct Case {
    std::string_view name;
    std::string_view script;
    StatusCode code;
    std::string_view want;  // in the message
  };
  const Case cases[] = {
      {"two Slurm GPU options", "#SBATCH --gpus-per-node=1\n#SBATCH --gres=gpu:1\n",
       StatusCode::kFailedPrecondition,
       "job.sh:2: #SBATCH --gres=gpu:1: --gres=gpu:1: give one of"},
      {"--gpus not shared evenly", "#SBATCH -N 2 --gpus=3\n", StatusCode::kFailedPrecondition,
       "job.sh: #SBATCH: --gpus=3: 3 GPUs do not share evenly"},
      {"bad Slurm count", "#SBATCH --gpus-per-node=two\n", StatusCode::kInvalidArgument,
       "job.sh:1: #SBATCH --gpus-per-node=two: Invalid --gpus-per-node specification"},
      {"LSF's MPS", "#BSUB -gpu mps=yes\n", StatusCode::kFailedPrecondition,
       "job.sh:1: #BSUB -gpu mps=yes: -gpu mps=yes: mps=yes is not supported"},
      {"-gpu with a compound -R", "#BSUB -R '2*{select[a]} + {select[b]}'\n#BSUB -gpu -\n",
       StatusCode::kFailedPrecondition, "job.sh: #BSUB: -gpu: the resource request is compound"},
      {"#SLUICE --gpu with an unknown key", "#SLUICE --gpu bogus=1\n", StatusCode::kInvalidArgument,
       "job.sh:1: #SLUICE --gpu bogus=1: unknown keyword 'bogus'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Directives> parsed = ParseDirectives(c.script, "job.sh", kNow);
    ASSERT_FALSE(parsed.has_value());
    EXPECT_EQ(parsed.error().code(), c.code);
    EXPECT_NE(parsed.error().message().find(c.want), std::string::npos) << parsed.error().message();
  }
}

TEST(DirectivesTest, TheCommandLineWins) {
  SubmitFlags command_line;
  command_line.queue = "cli";
  command_line.command = {"job.sh"};
  SubmitFlags directives;
  directives.queue = "script";
  directives.tasks = "4";
  directives.exclusive = true;
  directives.priority = 3;
  directives.gpu = "num=2";
  const SubmitFlags merged = MergeFlags(command_line, directives);
  EXPECT_EQ(merged.queue, "cli");
  EXPECT_EQ(merged.tasks, "4");
  EXPECT_TRUE(merged.exclusive);
  EXPECT_EQ(merged.priority, 3);
  EXPECT_EQ(merged.gpu, "num=2");
  EXPECT_EQ(merged.command, std::vector<std::string>{"job.sh"});
}

}  // namespace
}  // namespace sluice::client
