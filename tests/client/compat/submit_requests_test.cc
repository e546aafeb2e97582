// sbatch's and bsub's options as the clients send them (docs/compat.md): what Sluice is asked
// to run, and clear refusals; their GPU options as the gpu[] section (docs/design/gpu-plan.md).
#include <gtest/gtest.h>

#include "client/compat/bsub_request.h"
#include "client/compat/env_export.h"
#include "client/compat/gpu_request.h"
#include "client/compat/memory.h"
#include "client/compat/sbatch_request.h"

namespace sluice::client::compat {
namespace {

constexpr int64_t kNow = 1796425873;

TEST(SbatchRequestTest, ToilsAndSnakemakesCommandLinesMap) {
  const std::vector<std::string> toil = {"-J", "toil_job_0_None", "--export=ALL,OMP_NUM_THREADS=1",
                                         "--mem=96", "--cpus-per-task=1", "-o", "out.%j.log",
                                         "--wrap=_toil_worker hello"};
  Result<SbatchCommandLine> line = ParseSbatchArgs(toil, kNow);
  ASSERT_TRUE(line.has_value()) << line.error().message();
  EXPECT_EQ(line->request.wrap, "_toil_worker hello");
  EXPECT_EQ(line->request.export_spec, "ALL,OMP_NUM_THREADS=1");
  Result<SubmitFlags> flags = ToSubmitFlags(line->request, "root");
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(flags->name, "toil_job_0_None");
  EXPECT_EQ(flags->resreq, "rusage[mem=96]");
  EXPECT_EQ(flags->output, "out.%j.log");

  const std::vector<std::string> snakemake = {"-J", "snakejob_a_2", "-p", "batch", "-t", "5",
                                              "--mem", "100", "--cpus-per-task=2", "-D", "/w",
                                              "--wrap=python3 -m snakemake"};
  line = ParseSbatchArgs(snakemake, kNow);
  ASSERT_TRUE(line.has_value()) << line.error().message();
  flags = ToSubmitFlags(line->request, "root");
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(flags->queue, "batch");
  EXPECT_EQ(flags->run_limit, "300s");
  EXPECT_EQ(flags->tasks, "2");
  EXPECT_EQ(flags->resreq, "span[hosts=1] rusage[mem=50]");  // one task: one host; --mem per host
  EXPECT_EQ(flags->cwd, "/w");
}

TEST(SbatchRequestTest, BadValuesAndUnsupportedOptionsAreRefused) {
  struct Case {
    std::string_view name;
    std::vector<std::string> args;
    StatusCode code;
  };
  const Case cases[] = {
      {"bad time", {"--time=abc", "x.sh"}, StatusCode::kInvalidArgument},
      {"unknown option", {"--bogus", "x.sh"}, StatusCode::kInvalidArgument},
      {"bad memory", {"--mem=4X", "x.sh"}, StatusCode::kInvalidArgument},
      {"constraint", {"--constraint=avx", "x.sh"}, StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Result<SbatchCommandLine> line = ParseSbatchArgs(c.args, kNow);
    ASSERT_FALSE(line.has_value());
    EXPECT_EQ(line.error().code(), c.code);
  }
}

TEST(BsubRequestTest, ToilsCommandLineReservesItsMemory) {
  const std::vector<std::string> toil = {"-cwd", ".", "-J", "toil_job_0", "-R",
                                         "select[mem>100MB] rusage[mem=100MB]", "-M", "100MB",
                                         "-n", "1", "-o", "o.%J.log", "_toil_worker hello"};
  Result<BsubCommandLine> line = ParseBsubArgs(toil, kNow);
  ASSERT_TRUE(line.has_value()) << line.error().message();
  ASSERT_EQ(line->operands.size(), 1u);
  EXPECT_EQ(line->operands[0], "_toil_worker hello");
  Result<SubmitFlags> flags = ToSubmitFlags(line->request);
  ASSERT_TRUE(flags.has_value());
  EXPECT_EQ(flags->name, "toil_job_0");
  EXPECT_EQ(flags->tasks, "1");
  EXPECT_EQ(flags->resreq, "select[mem>100MB] rusage[mem=100MB]");  // reserves mem already
}

TEST(BsubRequestTest, InteractiveFormsAreReadAndTheSshAndX11OnesRefused) {
  const auto interactive = [](const char* option) {
    const std::vector<std::string> args = {option, "-n", "2", "hostname"};
    Result<BsubCommandLine> line = ParseBsubArgs(args, kNow);
    return line ? line->request.interactive : BsubInteractive::kNo;
  };
  EXPECT_EQ(interactive("-I"), BsubInteractive::kPlain);
  EXPECT_EQ(interactive("-Ip"), BsubInteractive::kPty);
  EXPECT_EQ(interactive("-Is"), BsubInteractive::kPty);
  const std::vector<std::string> plain = {"hostname"};
  EXPECT_EQ(ParseBsubArgs(plain, kNow)->request.interactive, BsubInteractive::kNo);
  for (const char* refused : {"-IS", "-ISp", "-ISs", "-IX"}) {
    const std::vector<std::string> args = {refused, "hostname"};
    Result<BsubCommandLine> line = ParseBsubArgs(args, kNow);
    ASSERT_FALSE(line.has_value()) << refused;
    EXPECT_EQ(line.error().code(), StatusCode::kFailedPrecondition);
  }
  // Only the command line makes a job interactive, as only it can wait (-K).
  BsubRequest request;
  const std::vector<std::string> directive = {"-Is"};
  EXPECT_FALSE(ApplyBsubDirective(directive, kNow, request).ok());
}

// The request a command line sends (its -R), or the error of reading or translating it.
template <typename Line, typename ParseArgs, typename Translate>
Result<std::string> ResreqOf(const std::vector<std::string>& args, ParseArgs parse,
                             Translate translate) {
  Result<Line> line = parse(args, kNow);
  if (!line) return line.error();
  Result<SubmitFlags> flags = translate(line->request);
  if (!flags) return flags.error();
  return flags->resreq;
}

Result<std::string> BsubResreq(const std::vector<std::string>& args) {
  return ResreqOf<BsubCommandLine>(args, &ParseBsubArgs,
                                   [](const BsubRequest& r) { return ToSubmitFlags(r); });
}

Result<std::string> SbatchResreq(const std::vector<std::string>& args) {
  return ResreqOf<SbatchCommandLine>(
      args, &ParseSbatchArgs, [](const SbatchRequest& r) { return ToSubmitFlags(r, "root"); });
}

struct GpuCase {
  std::string_view name;
  std::vector<std::string> args;
  std::string_view want_resreq;
};

struct GpuRefusal {
  std::string_view name;
  std::vector<std::string> args;
  StatusCode code;
  std::string_view want;  // in the message
};

TEST(BsubRequestTest, GpuBecomesTheGpuSectionOfTheRequest) {
  const GpuCase cases[] = {
      {"the defaults", {"-gpu", "-", "x"}, "gpu[num=1]"},
      {"Sluice's keys as written",
       {"-gpu", "num=2:mode=exclusive_process:j_exclusive=yes:glink=yes:aff=no", "x"},
       "gpu[num=2:mode=exclusive_process:j_exclusive=yes:glink=yes:aff=no]"},
      {"shared with memory", {"-gpu", "num=1/task:mode=shared:gmem=10G", "x"},
       "gpu[num=1/task:mode=shared:gmem=10G]"},
      {"appended to -R", {"-R", "span[hosts=1]", "-gpu", "num=4/host", "x"},
       "span[hosts=1] gpu[num=4/host]"},
      {"after -M's memory", {"-M", "100", "-gpu", "-", "x"}, "rusage[mem=100] gpu[num=1]"},
      {"mps=no dropped", {"-gpu", "num=2:mps=no", "x"}, "gpu[num=2]"},
      {"only mps=no: the defaults", {"-gpu", "mps=no", "x"}, "gpu[num=1]"},
      {"a model that is a name", {"-gpu", "gmodel=A100", "x"}, "gpu[gmodel=A100]"},
      {"a model with '-' is quoted", {"-gpu", "num=1:gmodel=Tesla-V100", "x"},
       "gpu[num=1:gmodel=\"Tesla-V100\"]"},
      {"a quoted model keeps one pair of quotes", {"-gpu", "gmodel='Tesla V100'", "x"},
       "gpu[gmodel=\"Tesla V100\"]"},
      {"spaces around keys", {"-gpu", " num=2 : mode=shared ", "x"}, "gpu[num=2:mode=shared]"},
  };
  for (const GpuCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::string> resreq = BsubResreq(c.args);
    ASSERT_TRUE(resreq.has_value()) << resreq.error().message();
    EXPECT_EQ(*resreq, c.want_resreq);
  }
}

TEST(BsubRequestTest, GpuRefusals) {
  const GpuRefusal cases[] = {
      {"MPS", {"-gpu", "num=1:mps=yes", "x"}, StatusCode::kFailedPrecondition,
       "-gpu num=1:mps=yes: mps=yes is not supported by Sluice"},
      {"MPS per socket", {"-gpu", "mps=per_socket", "x"}, StatusCode::kFailedPrecondition,
       "mps=per_socket is not supported"},
      {"an LSF key Sluice lacks", {"-gpu", "gtile=2", "x"}, StatusCode::kFailedPrecondition,
       "'gtile' is not supported by Sluice"},
      {"an unknown key", {"-gpu", "bogus=1", "x"}, StatusCode::kInvalidArgument,
       "unknown keyword 'bogus'"},
      {"no value", {"-gpu", "num", "x"}, StatusCode::kInvalidArgument,
       "'num': expected KEY=VALUE"},
      {"empty", {"-gpu", "", "x"}, StatusCode::kInvalidArgument, "expected - or KEY=VALUE"},
      {"a key twice", {"-gpu", "num=1:num=2", "x"}, StatusCode::kInvalidArgument,
       "'num' is given twice"},
      {"a value that would close the section", {"-gpu", "num=2]", "x"},
       StatusCode::kInvalidArgument, "expected letters, digits"},
      {"a model with both quotes", {"-gpu", "gmodel=a'b\"c", "x"}, StatusCode::kInvalidArgument,
       "both ' and \""},
      {"a compound -R", {"-R", "2*{select[a]} + 4*{select[b]}", "-gpu", "-", "x"},
       StatusCode::kFailedPrecondition,
       "-gpu: the resource request is compound or has alternatives; write gpu[...] inside"},
      {"an alternative -R", {"-R", "{select[a]} || {select[b]}", "-gpu", "-", "x"},
       StatusCode::kFailedPrecondition, "inside each of its parts"},
      {"-R with gpu[] already", {"-R", "gpu[num=1]", "-gpu", "num=2", "x"},
       StatusCode::kFailedPrecondition, "-gpu: the resource request has a gpu[] section already"},
  };
  for (const GpuRefusal& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::string> resreq = BsubResreq(c.args);
    ASSERT_FALSE(resreq.has_value()) << *resreq;
    EXPECT_EQ(resreq.error().code(), c.code);
    EXPECT_NE(resreq.error().message().find(c.want), std::string::npos)
        << resreq.error().message();
  }
}

TEST(SbatchRequestTest, GpuOptionsBecomeTheGpuSection) {
  const GpuCase cases[] = {
      {"per node", {"--gpus-per-node=2", "x.sh"}, "gpu[num=2/host]"},
      {"per node with a type", {"--gpus-per-node=a100:2", "x.sh"}, "gpu[num=2/host:gmodel=a100]"},
      {"gres alone is one", {"--gres=gpu", "x.sh"}, "gpu[num=1/host]"},
      {"gres with a count", {"--gres=gpu:4", "x.sh"}, "gpu[num=4/host]"},
      {"gres with a type", {"--gres=gpu:tesla", "x.sh"}, "gpu[num=1/host:gmodel=tesla]"},
      {"gres with a type that is quoted", {"--gres", "gpu:tesla-v100:2", "x.sh"},
       "gpu[num=2/host:gmodel=\"tesla-v100\"]"},
      {"per task", {"--gpus-per-task=1", "-n", "4", "x.sh"}, "gpu[num=1/task]"},
      {"in all, one node", {"-G", "4", "x.sh"}, "gpu[num=4/host]"},
      {"in all, -N 1", {"--gpus=v100:2", "-N", "1", "x.sh"},
       "span[hosts=1] gpu[num=2/host:gmodel=v100]"},
      {"in all over two nodes", {"--gpus=8", "-N", "2", "x.sh"}, "span[ptile=1] gpu[num=4/host]"},
      {"after the memory", {"--mem=100", "--gpus-per-node=1", "x.sh"},
       "rusage[mem=100] gpu[num=1/host]"},
      {"the same option again wins", {"--gpus-per-node=1", "--gpus-per-node=2", "x.sh"},
       "gpu[num=2/host]"},
  };
  for (const GpuCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::string> resreq = SbatchResreq(c.args);
    ASSERT_TRUE(resreq.has_value()) << resreq.error().message();
    EXPECT_EQ(*resreq, c.want_resreq);
  }
}

TEST(SbatchRequestTest, GpuRefusals) {
  const GpuRefusal cases[] = {
      {"--gpus not shared evenly", {"--gpus=3", "-N", "2", "x.sh"},
       StatusCode::kFailedPrecondition,
       "--gpus=3: 3 GPUs do not share evenly over --nodes=2; give --gpus-per-node instead"},
      {"two GPU options", {"--gpus-per-node=2", "--gres=gpu:2", "x.sh"},
       StatusCode::kFailedPrecondition,
       "--gres=gpu:2: give one of --gpus, --gpus-per-node, --gpus-per-task and --gres=gpu "
       "(--gpus-per-node=2 is given already)"},
      {"another gres", {"--gres=lic:2", "x.sh"}, StatusCode::kFailedPrecondition,
       "the gres 'lic' is not supported by Sluice (only gpu is)"},
      {"gpu and another gres", {"--gres=gpu:1,lic:2", "x.sh"}, StatusCode::kFailedPrecondition,
       "the gres 'lic'"},
      {"two types in gres", {"--gres=gpu:a:1,gpu:b:1", "x.sh"}, StatusCode::kFailedPrecondition,
       "several GPU types"},
      {"two types per node", {"--gpus-per-node=a100:1,v100:1", "x.sh"},
       StatusCode::kFailedPrecondition, "several GPU types"},
      {"zero GPUs", {"--gpus-per-node=0", "x.sh"}, StatusCode::kInvalidArgument,
       "Invalid --gpus-per-node specification"},
      {"not a count", {"--gpus-per-task=x", "x.sh"}, StatusCode::kInvalidArgument,
       "Invalid --gpus-per-task specification"},
      {"an empty type", {"--gpus=:2", "x.sh"}, StatusCode::kInvalidArgument,
       "Invalid --gpus specification"},
      {"too many gres fields", {"--gres=gpu:a:b:2", "x.sh"}, StatusCode::kInvalidArgument,
       "Invalid --gres specification"},
      {"an empty gres field", {"--gres=gpu:", "x.sh"}, StatusCode::kInvalidArgument,
       "Invalid --gres specification"},
      {"memory per GPU", {"--mem-per-gpu=10G", "x.sh"}, StatusCode::kFailedPrecondition,
       "--mem-per-gpu is not supported by Sluice"},
      {"CPUs per GPU", {"--cpus-per-gpu=2", "x.sh"}, StatusCode::kFailedPrecondition,
       "--cpus-per-gpu is not supported by Sluice"},
  };
  for (const GpuRefusal& c : cases) {
    SCOPED_TRACE(c.name);
    Result<std::string> resreq = SbatchResreq(c.args);
    ASSERT_FALSE(resreq.has_value()) << *resreq;
    EXPECT_EQ(resreq.error().code(), c.code);
    EXPECT_NE(resreq.error().message().find(c.want), std::string::npos)
        << resreq.error().message();
  }
}

// The command line's GPU option replaces the directives' (whichever option each used).
TEST(SbatchRequestTest, TheCommandLinesGpuOptionWins) {
  SbatchRequest directives;
  const std::vector<std::string> line = {"--gres=gpu:4"};
  ASSERT_TRUE(ApplySbatchDirective(line, kNow, directives).ok());
  const std::vector<std::string> args = {"--gpus-per-task=1", "x.sh"};
  Result<SbatchCommandLine> command_line = ParseSbatchArgs(args, kNow);
  ASSERT_TRUE(command_line.has_value());
  Result<SubmitFlags> flags = ToSubmitFlags(MergeSbatch(command_line->request, directives), "");
  ASSERT_TRUE(flags.has_value()) << flags.error().message();
  EXPECT_EQ(flags->resreq, "gpu[num=1/task]");
  flags = ToSubmitFlags(MergeSbatch(SbatchRequest{}, directives), "");
  ASSERT_TRUE(flags.has_value()) << flags.error().message();
  EXPECT_EQ(flags->resreq, "gpu[num=4/host]");
}

TEST(GpuRequestTest, OptionNamesAreComplete) {
  for (SlurmGpuOption option : {SlurmGpuOption::kGpus, SlurmGpuOption::kGpusPerNode,
                                SlurmGpuOption::kGpusPerTask, SlurmGpuOption::kGres}) {
    EXPECT_TRUE(ToString(option).starts_with("--")) << static_cast<int>(option);
  }
}

TEST(MemoryTest, UnitsOfBothDialects) {
  EXPECT_EQ(ParseMemoryMb("4G", MemoryDialect::kSlurm).value(), 4096);
  EXPECT_EQ(ParseMemoryMb("100", MemoryDialect::kSlurm).value(), 100);
  EXPECT_EQ(ParseMemoryMb("105MB", MemoryDialect::kLsf).value(), 105);
  EXPECT_EQ(ParseMemoryMb("1.5GB", MemoryDialect::kLsf).value(), 1536);
  EXPECT_FALSE(ParseMemoryMb("4Q", MemoryDialect::kSlurm).has_value());
}

TEST(EnvExportTest, SlurmExportBuildsTheJobsEnvironment) {
  const Environment caller = {{"HOME", "/root"}, {"SLURM_CONF", "x"}, {"PATH", "/bin"}};
  Result<Environment> all = ResolveSlurmExport("ALL,OMP_NUM_THREADS=1", caller);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->at("HOME"), "/root");
  EXPECT_EQ(all->at("OMP_NUM_THREADS"), "1");
  Result<Environment> none = ResolveSlurmExport("NONE", caller);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->count("HOME"), 0u);
  EXPECT_EQ(none->count("SLURM_CONF"), 1u);
  Result<Environment> listed = ResolveSlurmExport("PATH,X=2", caller);
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(*listed, (Environment{{"PATH", "/bin"}, {"SLURM_CONF", "x"}, {"X", "2"}}));
  EXPECT_FALSE(ResolveSlurmExport("ALL,1BAD=x", caller).has_value());
}

}  // namespace
}  // namespace sluice::client::compat
